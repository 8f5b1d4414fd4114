"""The observer (DESIGN §5): the queue consumer that turns captured events into observations and
summaries.

`service` is the worker service; `pipeline` claims a batch, prompts (`prompts`, `events`), parses
the reply (`parser`) and stores the results; `conversations` keeps one observer session per Claude
Code session; `report` is what `status` shows. `provider` is the interface and its one registry;
`providers` holds the built-in providers (others come from installed plugins, `claude_mem.plugins`).
"""
