"""Documents to chunks: files parsed, chats read as turns, text cut on its natural boundaries.

Nothing here reads the database or an index: `parse_paths` turns files and folders into
`Document`s (`parsing`, a module per format: `text_formats`, `pdf`, `json_files`, over the
reading rules of `file_text`; HTML pages to Markdown without their navigation, headers and
footers in `html_pages`; titles from `titles`; the HTML pages of one add read together in
`page_sets`: titles without the site's name, blocks repeated on most pages taken out;
`plain_text`, what a page's Markdown shows a reader), `conversation` reads chats as request→reply
turns, `identity` checks documents before they are stored and fingerprints them for upserts,
`llama_documents` reads llama-index documents as `add_files` reads files, and
`chunk_document` cuts a document at its units, markdown sections (`sections`) and blocks
(`blocks`: list items, definition-list entries, a lead-in with what it introduces, among
them), then paragraphs and sentences, counting exact tokens.
"""

from __future__ import annotations

from windowpack.documents.blocks import Block, markdown_blocks, with_lead_ins
from windowpack.documents.chunking import Chunk, chunk_all, chunk_document, natural_units
from windowpack.documents.conversation import (
    conversation_document,
    is_message,
    message_starts,
    transcript_document,
    transcript_turns,
)
from windowpack.documents.identity import checked_identity, fingerprint, reject_duplicate_ids
from windowpack.documents.llama_documents import from_llama_documents
from windowpack.documents.page_sets import MIN_PAGES, shared_title_warning, site_pages
from windowpack.documents.parsing import (
    ParsedFile,
    ParseLimits,
    ParseResult,
    parse_bytes,
    parse_or_error,
    parse_paths,
    read_file,
)
from windowpack.documents.plain_text import plain_text
from windowpack.documents.sections import (
    PATH_SEPARATOR,
    heading_starts,
    heading_trail,
    parse_heading,
    section_paths,
)
from windowpack.documents.text_formats import FURNITURE_KEY, TITLES_KEY
from windowpack.documents.titles import html_title, html_titles, markdown_title

__all__ = [
    "FURNITURE_KEY",
    "MIN_PAGES",
    "PATH_SEPARATOR",
    "TITLES_KEY",
    "Block",
    "Chunk",
    "ParseLimits",
    "ParseResult",
    "ParsedFile",
    "checked_identity",
    "chunk_all",
    "chunk_document",
    "conversation_document",
    "fingerprint",
    "from_llama_documents",
    "heading_starts",
    "heading_trail",
    "html_title",
    "html_titles",
    "is_message",
    "markdown_blocks",
    "markdown_title",
    "message_starts",
    "natural_units",
    "parse_bytes",
    "parse_heading",
    "parse_or_error",
    "parse_paths",
    "plain_text",
    "read_file",
    "reject_duplicate_ids",
    "section_paths",
    "shared_title_warning",
    "site_pages",
    "transcript_document",
    "transcript_turns",
    "with_lead_ins",
]
