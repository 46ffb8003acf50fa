"""The ground floor every component stands on: exact token counts, content hashes, sentences.

Pure functions over strings, no database and no models: `tokens` (offline tiktoken and
Hugging Face tokenizers), `hashing` (the cache key of every derived artefact) and
`sentences` (the one sentence splitter the chunker, BM25 and the summarizer share).
"""
