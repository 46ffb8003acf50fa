"""The order-preserving summary tree: building its levels, storing and reading them.

`TreeBuilder` groups chunks into levels whose nodes a `Summarizer` summarises (the default
`ExtractiveSummarizer`, or `LLMSummarizer` over any llama-index LLM), each led by the heading
path and term it lies under; `outline` makes a chat's request index or a document's table of
contents (its sections, and its terms as `definitions` reads them; its root led by what the
document is for), and lists a collection's documents, by group (`groups`) where they do not
all fit; `prose` tells statements from code, markup, titles and lead-ins; `persistence`
stores levels with their cache; `collection_levels` regroups the document roots after a
write, rewriting only the nodes whose children changed; `overview` reads the tree back for
callers.
"""

from __future__ import annotations

from windowpack.summarizer.base import Summarizer
from windowpack.summarizer.collection_levels import (
    CollectionLevels,
    rebuild_collection_levels,
    update_collection_levels,
)
from windowpack.summarizer.extractive import ExtractiveSummarizer
from windowpack.summarizer.outline import DocumentOutline, document_outline
from windowpack.summarizer.overview import tree_node, tree_overview
from windowpack.summarizer.persistence import (
    CommittingSummaryCache,
    SessionSummaryCache,
    insert_levels,
)
from windowpack.summarizer.tree import (
    BuiltNode,
    SummaryCache,
    TreeBuilder,
    TreeCost,
    TreeItem,
    TreeStats,
    estimate_tree_cost,
)

__all__ = [
    "BuiltNode",
    "CollectionLevels",
    "CommittingSummaryCache",
    "DocumentOutline",
    "ExtractiveSummarizer",
    "SessionSummaryCache",
    "Summarizer",
    "SummaryCache",
    "TreeBuilder",
    "TreeCost",
    "TreeItem",
    "TreeStats",
    "document_outline",
    "estimate_tree_cost",
    "insert_levels",
    "rebuild_collection_levels",
    "tree_node",
    "tree_overview",
    "update_collection_levels",
]
