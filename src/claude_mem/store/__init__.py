"""The store (DESIGN §2a): the only package that holds SQL.

`db` is the one way to open the database; `migrations` define its schema; `transaction` nests
write transactions. Small repositories own their queries: `capture` (the hooks' rows and the
spool), `queue` and `results` (the observer's batches and what it wrote), `memory`, `search`,
`vectors`, `context`, `projects`, `forget`, `portable` and `imports`, `stats` and `usage`, `team`
and `team_server` (DESIGN §12); `foreign` reads the original claude-mem's database. `backup`,
`integrity`, `salvage`, `caught_late` and `checkup` keep the database whole. What the hooks use is
stdlib only.
"""
