"""What the worker answers the prompt hook (`POST /api/related`): the project's observations that
match a prompt well by words and meaning, minus what the session has already been shown.

The project's best cosine to the prompt is looked at first: below `prompt_context.MIN_COSINE` nothing
matches well enough to speak, and the answer is the empty one at once, without ranking every row that
shares a word with the prompt (most prompts have nothing relevant; the hook waits for this answer).
Otherwise hybrid search ranks, and a hit is kept when its cosine reaches `prompt_context.KEEP_COSINE`
(fused scores are relative to the candidates, so cannot be thresholded). Without vectors or the model, the
same keyword search the hook would run itself.
"""

from dataclasses import replace

from claude_mem.domain import RecallError
from claude_mem.index import embedder
from claude_mem.index.query import SearchQuery
from claude_mem.index.search import available_modes, search
from claude_mem.recall import prompt_context
from claude_mem.store import Store
from claude_mem.store import context as store_context

FIELDS = ("id", "created_at", "type", "title", "subtitle", "score", "cosine")


def related(conn: Store, project: str, prompt: str, session: str, limit: int) -> dict[str, object]:
    """`{items, mode}`: up to `limit` good matches, best first; `mode` says how they were found."""
    exclude = store_context.shown_ids(conn, session) if session else set()
    prompt = prompt[:prompt_context.MAX_PROMPT_CHARS]
    # `default_mode` would count every row and vector (64 ms at 100k): any vector of the model will do
    if "hybrid" in available_modes() and store_context.has_vectors(conn, embedder.MODEL):
        try:
            if not _may_match(conn, project, prompt):
                return {"items": [], "mode": "hybrid"}
            found = search(conn, replace(SearchQuery.build(prompt, mode="hybrid", project=project,
                                                           limit=limit + len(exclude)), embed_waiting=False))
        except RecallError:
            pass
        else:
            if found.degraded:  # the model failed to load or run: keyword search, as the hook would
                return {"items": prompt_context.keyword_matches(conn, project, prompt, exclude, limit), "mode": "keyword"}
            items = [{key: hit.get(key) for key in FIELDS} for hit in found.items
                     if hit["id"] not in exclude and hit.get("superseded_by") is None
                     and float(hit.get("cosine") or 0.0) >= prompt_context.KEEP_COSINE]
            return {"items": items[:limit], "mode": "hybrid"}
    return {"items": prompt_context.keyword_matches(conn, project, prompt, exclude, limit), "mode": "keyword"}


def _may_match(conn: Store, project: str, prompt: str) -> bool:
    """Whether any observation of `project` comes within `MIN_COSINE` of the prompt (the one best by
    meaning, as hybrid search would compute and round its cosine)."""
    found = search(conn, replace(SearchQuery.build(prompt, mode="semantic", project=project, limit=1), embed_waiting=False))
    best = found.items
    return found.degraded == "keyword" or bool(best) and float(best[0].get("cosine") or 0.0) >= prompt_context.MIN_COSINE
