"""Search behind one interface (DESIGN §2a, §6): a `SearchQuery` in, ranked hits out.

`query` validates a search once; `search.search` runs the index its mode names: `keyword` (FTS5
BM25), or `semantic` and `hybrid` (MiniLM embeddings from `embedder`, fused with BM25). `fts` turns
user text into a safe FTS5 expression (stdlib only: the user-prompt hook uses it). The SQL lives in
`claude_mem.store`.
"""
