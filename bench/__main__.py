"""`python -m bench [NAME…] [--quick]`: run every benchmark (or the named ones); one table of every
figure beside its budget on stderr, the whole JSON report on stdout.

Options (words starting with `--`, and the value after one of `VALUE_OPTIONS`) are passed to every benchmark's
`main`: `--quick` for shorter runs, `--json` for bare JSON, `--data FILE` for `locomo` and `when`, `--conversations
ID,ID` for `locomo`, `--size N` (observations) for `search`, `export`, `import-claude-mem` and `write`; `--phases`
(with `--before SRC`: another checkout's `src`) for `hooks`; `--recurrences N`, `--runs N`, `--keep DIR`
(and `--before ROOT`) for `failures`; `--sizes 10k,100k,1m` for `ann` and `vectors` (`ann` also
takes `--check-wheels`, `--no-wheels`, `--methods`, `--builds`, `--expansions`, `--real`; `vectors` `--backfill-seconds`).
"""

import importlib
import json
import pkgutil
import sys

import bench
from bench.bench_failures import rows as failures_rows

# options followed by a value (`--data FILE`, `--size N`)
VALUE_OPTIONS = ("--data", "--size", "--before", "--sweep", "--sizes", "--builds", "--expansions", "--methods", "--real",
                 "--backfill-seconds", "--conversations", "--recurrences", "--runs", "--keep")


def main(argv: list[str]) -> int:
    available = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    options, names = [], []
    for index, arg in enumerate(argv):
        if arg.startswith("--") or (index and argv[index - 1] in VALUE_OPTIONS):
            options.append(arg)
        else:
            names.append(arg.replace("-", "_"))  # `import-transcripts` runs bench_import_transcripts
    wanted = names or available
    unknown = [name for name in wanted if name not in available]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr)
        return 2
    report = {}
    for name in wanted:
        print(f"running bench {name} …", file=sys.stderr, flush=True)
        report[name] = importlib.import_module(f"bench.bench_{name}").main(options)
    print_table(report)
    print(json.dumps(report, indent=2))
    return 0


def rows(report: dict) -> list[tuple[str, str, str, bool | None]]:
    """(figure, value, budget, within) for every figure that has a budget or is worth a line."""
    found: list[tuple[str, str, str, bool | None]] = []
    found += hooks_rows(report.get("hooks"))
    found += recall_rows(report.get("recall"))
    fresh = report.get("freshness")
    if fresh:
        for name, label in (("session_start", "session-start hook, 50 observations × 3 files"), ("search", "search p50")):
            figures = fresh[name]
            found.append((f"freshness on vs off: {label}", f"{figures['on_p50_ms']} vs {figures['off_p50_ms']} ms ="
                          f" {figures['ratio']}×", f"≤ {fresh['target_ratio']}×", figures["ratio"] <= fresh["target_ratio"]))
    in_use = report.get("use")
    if in_use:
        status = in_use["status_json"]
        found.append((f"status --json with memory in use vs without ({in_use['observations']:,} obs)",
                      f"{status['now_p50_ms']} vs {status['before_p50_ms']} ms = {status['ratio']}×",
                      f"≤ {status['budget_ratio']}×", status["ratio"] <= status["budget_ratio"]))
        found.append(("memory-use derivation, captured events/s", f"{in_use['derive']['events_per_s']:,}", "", None))
    tokens = report.get("observer_tokens")
    if tokens:
        for name in ("session-edit", "synthetic-200"):
            wire = tokens[name]["anthropic_wire"]
            found.append((f"observer input tokens / tool event ({name})",
                          f"{wire['batched']['input_tokens_per_event']} batched vs "
                          f"{wire['one_event_per_call']['input_tokens_per_event']} one per call",
                          "batched < one per call", wire["ratio"] < 1))
    spent = report.get("budget")
    if spent:
        found.append(("observer budget: a batch stored with the check and the ledger entry",
                      f"{spent['with_budget_p50_ms']} vs {spent['store_batch_p50_ms']} ms = {spent['ratio']}×",
                      f"≤ {spent['target_ratio']}×", spent["within_budget"]))
    found += locomo_rows(report.get("locomo"))
    found += write_rows(report.get("write"))
    found += search_rows(report.get("search"))
    found += embed_rows(report.get("embed"))
    found += startup_rows(report.get("startup"))
    found += auto_memory_rows(report.get("auto_memory"))
    found += export_rows(report.get("export"))
    transcripts = report.get("import_transcripts")
    if transcripts:
        figures, flat = transcripts["import"], transcripts["memory_flat"]
        found.append((f"import transcripts, {transcripts['events']:,} events in {transcripts['sessions']} sessions",
                      f"{figures['events_per_s']} events/s = {figures['ratio_to_bare']}× bare parse+insert", "", None))
        found.append(("import transcripts, peak Python memory (1/5 corpus → full)",
                      f"{flat['import_peak_mb'][0]} → {flat['import_peak_mb'][1]} MB", "flat", flat["growth"] <= 1.5))
    original = report.get("import_claude_mem")
    if original:
        figures, flat = original["import"], original["memory_flat"]
        found.append((f"import claude-mem (the original's DB), {original['observations']:,} observations",
                      f"{figures['rows_per_s']:,} rows/s = {figures['ratio_to_bare']}× bare insert", "", None))
        found.append(("import claude-mem, peak Python memory (1/5 DB → full)",
                      f"{flat['import_peak_mb'][0]} → {flat['import_peak_mb'][1]} MB", "flat", flat["growth"] <= 1.5))
    worker = report.get("worker")
    if worker:
        found.append((f"capture: {worker['hook_calls']} hooks, 16 at a time", f"{worker['lost_events']} lost, "
                      f"{worker['locked_messages']} locked", "0 lost, 0 locked",
                      worker["lost_events"] == 0 and worker["locked_messages"] == 0))
        found.append(("capture throughput", f"{worker['capture_calls_per_s']} hook calls/s", "", None))
        found.append(("observer throughput (offline provider)", f"{worker['observer_events_per_s']} events/s", "", None))
        found.append(("worker resident memory", f"{worker['worker_rss_mb']} MB", f"≤ {worker['memory_budget_mb']} MB",
                      worker["worker_rss_mb"] <= worker["memory_budget_mb"]))
    install_env = report.get("install_env")
    if install_env:
        found.append(("first hook after `claude-mem install`: venv built",
                      f"{'yes' if install_env['venv_built'] else 'no'} (hook {install_env['first_hook_ms']} ms, worker "
                      f"answers after {install_env['worker_ready_s']} s; install {install_env['install_s']} s)",
                      "no venv", not install_env["venv_built"] and install_env["worker_ready_s"] is not None))
        stop = install_env["stops_itself_s"]
        found.append(("worker stops itself after its hooks are removed", f"{stop} s", f"≤ {install_env['stop_budget_s']} s",
                      stop is not None and stop <= install_env["stop_budget_s"]))
        found.append(("worker's look at its registration (every 2 s)",
                      f"{install_env['watch_look_cpu_us']} µs CPU = {install_env['watch_cpu_s_per_day']} s CPU a day", "",
                      None))
    found += team_rows(report.get("team"))
    found += team_reconcile_rows(report.get("team"))
    when = report.get("when")
    if when:  # issue 29, time in the question: can a time prior help, and where (LoCoMo, `bench_when`)
        for name, figures in when["categories"].items():
            found.append((f"time named in the question, LoCoMo {name} ({figures['questions']} questions)",
                          f"{figures['hinted']} hinted ({figures['anchors']} anchors); window holds the evidence "
                          f"{figures['window_holds_all_evidence']} (calendar dates {figures['calendar_holds_all_evidence']},"
                          f" +7 days {figures['calendar_holds_all_within_a_week_after']}); median "
                          f"{figures['median_window_days']} days, {figures['median_sessions_inside']} of the sessions", "", None))
    found += privacy_rows(report.get("privacy"))
    found += vector_rows(report.get("ann"), report.get("vectors"))
    found += failures_rows(report.get("failures"))
    return found


# Issue 29's targets for LoCoMo (dev), and the figures of the run before it ("today").
LOCOMO_TARGETS = {"hybrid": 0.68, "keyword": 0.62}
LOCOMO_TODAY = {"hybrid": 0.607, "keyword": 0.568}
LOCOMO_SESSION_TARGET, LOCOMO_SESSION_TODAY = 0.94, 0.874
LOCOMO_P50_BUDGET_MS = 10.0
PROMPT_MEMORY_TARGET = {"evidence_added": 0.60, "unrelated_spoke": 0.05}
PROMPT_MEMORY_TODAY = {"evidence_added": 0.512, "unrelated_spoke": 0.041}


def locomo_rows(locomo: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `locomo` benchmark's figures beside issue 29's targets and the figures before it, each R@5 also
    as a ratio to the plain BM25 baseline of the same run."""
    if not locomo:
        return []
    found: list[tuple[str, str, str, bool | None]] = []
    base = locomo["baseline"]
    evidence = locomo.get("evidence")
    if evidence:
        found.append(("LoCoMo evidence ids: repaired, dropped (name no turn); questions left without any",
                      f"{evidence['repaired']} repaired, {evidence['dropped']} dropped, {evidence['questions_excluded']}"
                      f" excluded ({base['questions']} questions scored)", "", None))

    def versus(value: float, baseline: float) -> str:
        return f"{value} = {value / baseline:.2f}× BM25" if baseline else f"{value}"

    found.append(("LoCoMo turn R@5, plain FTS5 BM25 baseline", f"{base['R@5']} (R@10 {base['R@10']}; session R@5 "
                  f"{base.get('session_R@5', '–')}, top-5 sessions {base.get('top_sessions_R@5', '–')})", "", None))
    for mode, figures in locomo["modes"].items():
        target, today = LOCOMO_TARGETS.get(mode), LOCOMO_TODAY.get(mode)
        found.append((f"LoCoMo turn R@5, {mode} search" + (f" (today {today})" if today else ""),
                      f"{versus(figures['R@5'], base['R@5'])} (R@10 {figures['R@10']})",
                      f"≥ {target}" if target else "", figures["R@5"] >= target if target else None))
        if "top_sessions_R@5" in figures:
            hybrid = mode == "hybrid"
            found.append((f"LoCoMo session R@5, {mode} search: evidence sessions in the top 5 sessions"
                          + (f" (today {LOCOMO_SESSION_TODAY})" if hybrid else ""),
                          f"{versus(figures['top_sessions_R@5'], base['top_sessions_R@5'])}; in the top 5 turns' "
                          f"sessions {figures['session_R@5']} (R@10 {figures['session_R@10']})",
                          f"≥ {LOCOMO_SESSION_TARGET}" if hybrid else "",
                          figures["top_sessions_R@5"] >= LOCOMO_SESSION_TARGET if hybrid else None))
        budget = mode == "hybrid"
        found.append((f"LoCoMo {mode} search latency (in process, kept query embeddings dropped first)",
                      f"{figures['p50_ms']} ms p50, {figures['p95_ms']} ms p95",
                      f"≤ {LOCOMO_P50_BUDGET_MS:g} ms p50" if budget else "",
                      figures["p50_ms"] <= LOCOMO_P50_BUDGET_MS if budget else None))
    hybrid = locomo["modes"].get("hybrid")
    for part, label in (("tune", "tune (conversations 1–3)"), ("check", "check (the rest)")):
        if hybrid and part in hybrid.get("split", {}):
            figures, plain = hybrid["split"][part], base["split"][part]
            found.append((f"LoCoMo hybrid on the {label}, {figures['questions']} questions",
                          f"turn R@5 {versus(figures['R@5'], plain['R@5'])}; top-5 sessions "
                          f"{figures['top_sessions_R@5']} (BM25 {plain['top_sessions_R@5']})", "", None))
    compact = locomo.get("int8_vs_float32")
    if compact:
        found.append(("LoCoMo hybrid R@5, int8 vectors vs exact float32 (same run)",
                      f"{compact['hybrid_R@5_int8']} vs {compact['hybrid_R@5_float32']} (loss {compact['loss']})",
                      f"loss ≤ {compact['target_loss']}", compact["loss"] <= compact["target_loss"]))
    for way, figures in locomo.get("prompt_memory", {}).items():
        judged = way == "hybrid" and figures["unrelated_spoke"] is not None
        found.append((f"LoCoMo prompt memory ({way})" + (
            f" (today {PROMPT_MEMORY_TODAY['evidence_added']} / {PROMPT_MEMORY_TODAY['unrelated_spoke']})" if judged else ""),
                      f"evidence added {figures['evidence_added']}, unrelated answered {figures['unrelated_spoke']}",
                      f"≥ {PROMPT_MEMORY_TARGET['evidence_added']}, ≤ {PROMPT_MEMORY_TARGET['unrelated_spoke']}"
                      if judged else "",
                      figures["evidence_added"] >= PROMPT_MEMORY_TARGET["evidence_added"]
                      and figures["unrelated_spoke"] <= PROMPT_MEMORY_TARGET["unrelated_spoke"] if judged else None))
    return found


def write_rows(write: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `write` benchmark's figure: the observer's write path now against schema 16 (before issue 29)."""
    if not write:
        return []
    return [(f"write path, observations/s ({write['observations']:,} observations, {write['sessions']} sessions; CPU)",
             f"{write['after_rows_per_s']:,} vs {write['before_rows_per_s']:,} at schema 16 = slowdown "
             f"{write['slowdown']}× (wall {write['wall']['slowdown']}×)",
             f"≤ {write['target_slowdown']}×", write["slowdown"] <= write["target_slowdown"])]


def hooks_rows(hooks: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `hooks` benchmark's figures: the post-tool hook's CPU against bare python (the budget), its
    phases (`--phases`), and wall-clock lines."""
    if not hooks:
        return []
    found: list[tuple[str, str, str, bool | None]] = []
    cpu = hooks.get("cpu")
    if cpu:
        budget = f"≤ {cpu['budget_ratio']}× bare CPU"
        for name, label in (("read", "100 KB Read"), ("small_bash", "small Bash")):
            found.append((f"post-tool hook CPU, {label}, no worker (in process, as hooks.json runs it)",
                          f"{cpu[name]['cpu_ms']} ms = {cpu[name]['ratio']}× bare python CPU ({cpu['bare_cpu_ms']} ms)",
                          budget, cpu[name]["ratio"] <= cpu["budget_ratio"]))
        worker = hooks.get("with_worker")
        for name, label in (("read", "100 KB Read"), ("small_bash", "small Bash")):
            if worker:
                found.append((f"post-tool hook CPU, {label}, worker running (socket hand-off)",
                              f"{worker[name]['cpu_ms']} ms = {worker[name]['ratio']}× bare python CPU; wall "
                              f"{worker[name]['wall_ms']} ms = {worker[name]['wall_ratio']}×", budget,
                              worker[name]["ratio"] <= worker["budget_ratio"]))
        if worker:
            found.append(("post-tool events handed to the worker, stored", f"{worker['events_stored']} of "
                          f"{worker['events_sent']}", "all", worker["events_stored"] == worker["events_sent"]))
        found.append(("floor: python -I -S -c 'import json, sqlite3'",
                      f"{cpu['floor']['cpu_ms']} ms = {cpu['floor']['ratio']}× bare python CPU", "", None))
    phases = hooks.get("phases")
    if phases:
        read, bash = phases["read"], phases["small_bash"]
        for phase, value in read["phases_cpu_ms"].items():
            found.append((f"post-tool hook CPU by phase, no worker: {phase}",
                          f"{value} ms (100 KB Read) · {bash['phases_cpu_ms'][phase]} ms (small Bash)", "", None))
        found.append(("post-tool hook CPU by phase, no worker: whole process", f"{read['total_cpu_ms']} ms = {read['ratio']}× · "
                      f"{bash['total_cpu_ms']} ms = {bash['ratio']}× bare python CPU ({phases['bare_cpu_ms']} ms)",
                      f"≤ {phases['budget_ratio']}× bare CPU", max(read["ratio"], bash["ratio"]) <= phases["budget_ratio"]))
    labels = {"as_installed": "plugin, as hooks.json runs it", "resolved_interpreter": "plugin, resolved interpreter",
              "installed": "`claude-mem install` command", "console_script": "`claude-mem hook` console script"}
    for name, label in labels.items():
        if hooks.get(name):
            found.append((f"post-tool hook wall, 100 KB Read ({label})",
                          f"{hooks[name]['hook_ms_median']} ms = {hooks[name]['ratio']}× bare python", "", None))
    return found


def embed_rows(embed: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `embed` benchmark's figures: rows per CPU second of each text source against the old settings in
    the same run (the target on observation-length texts), and resident memory after a long backfill."""
    if not embed:
        return []
    if "unavailable" in embed:
        return [("embedding throughput", f"not measured: {embed['unavailable']}", "", None)]
    found: list[tuple[str, str, str, bool | None]] = []
    target = embed["target_rows_per_s"]
    for source, tokens in embed["tokens"].items():
        rates, ratios = embed["throughput"][source]["rows_per_s"], embed["throughput"][source]["ratio_to_before"]
        found.append((f"embedding backfill, {source} texts ({tokens['p50']} tokens p50, {tokens['over_128']:.0%} over 128),"
                      f" batches of {embed['batch']}, 1 thread",
                      f"{rates['after']} rows/CPU s = {ratios['after']}× before ({rates['before']}); int8 at 256 tokens "
                      f"{rates['int8_256']}, float32 sorted {rates['sorted']}, arena on {rates['int8_arena']}",
                      f"≥ {target:g} rows/s" if source != "long" else "", rates["after"] >= target if source != "long" else None))
    for name, memory in embed["memory"].items():
        found.append((f"embedder RSS after {memory['texts']:,} long texts + 1 query ({name})",
                      f"{memory['rss_after_mb']} MB = +{memory['growth_mb']} MB over one query "
                      f"({memory['rss_one_query_mb']} MB; peak {memory['peak_rss_mb']} MB)",
                      f"flat (≤ +{embed['flat_mb']:g} MB)" if name == "after" else "",
                      memory["flat"] if name == "after" else None))
    return found


def auto_memory_rows(figures: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """Issue 30: what Claude Code's auto memory beside ours costs the session start and a CLI search."""
    if not figures:
        return []
    hook = figures["session_start"]
    found = [(f"session start with a synced MEMORY.md vs without ({figures['observations']:,} observations)",
              f"{hook['with_notes']['cpu_ms']} vs {hook['without_notes']['cpu_ms']} ms CPU = "
              f"{figures['session_start_ratio_with_notes']}×", f"≤ {figures['session_start_budget']}×",
              figures["session_start_ratio_with_notes"] <= figures["session_start_budget"]),
             ("claude-mem search --mode keyword, notes included vs observations only",
              f"{figures['cli_search_ms']['with_notes']} vs {figures['cli_search_ms']['observations_only']} ms = "
              f"{figures['cli_search_ratio']}×", f"≤ {figures['cli_search_budget']}×",
              figures["cli_search_ratio"] <= figures["cli_search_budget"]),
             (f"auto memory: an unchanged look ({figures['notes']} notes), a first sync",
              f"{figures['unchanged_look_us']} µs, {figures['first_sync_ms']} ms", "", None)]
    if "session_start_ratio_to_before" in figures:
        found.append(("session start vs --before SRC: with notes, without",
                      f"{figures['session_start_ratio_to_before']}×, "
                      f"{figures['session_start_ratio_to_before_without_notes']}×", "", None))
    return found


def startup_rows(startup: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `startup` benchmark's figures: statusline, CLI keyword search and MCP initialize, each from spawn."""
    if not startup:
        return []
    size = f"{startup['observations']:,}"
    cli, mcp = startup["cli_search_keyword"], startup["mcp_initialize"]
    found = []
    for key, label in (("statusline", "worker stopped"), ("statusline_worker_running", "worker running")):
        line = startup.get(key)
        if line:
            found += [(f"statusline, {size} observations, {label} ({what})",
                       f"{line[f'{figure}_ms_median']} ms = {line[f'{figure}_ratio']}× bare python",
                       f"≤ {line['budget_ratio']}× bare", line[f"{figure}_ratio"] <= line["budget_ratio"])
                      for what, figure in (("CPU", "cpu"), ("wall", "wall"))]
    return found + [
        (f"CLI `search --mode keyword`, {size} observations",
         f"{cli['wall_ms_median']} ms wall = {cli['wall_ratio']}× bare python ({cli['cpu_ms_median']} ms CPU)",
         f"≤ {cli['budget_ms']:g} ms", cli["wall_ms_median"] <= cli["budget_ms"]),
        ("MCP server, spawn → initialize reply", f"{mcp['initialize_ms_median']} ms wall = {mcp['initialize_ratio']}× bare python"
         f" (tools/list {mcp['tools_list_ms_median']} ms)", f"≤ {mcp['budget_ms']:g} ms",
         mcp["initialize_ms_median"] <= mcp["budget_ms"]),
        ("MCP server, spawn → answer to a first keyword search", f"{mcp['first_search_ms_median']} ms wall", "", None),
    ]


def recall_rows(recall: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `recall` benchmark's figures: the session-start and user-prompt hooks by store size, search in
    process, the status line, the context's size."""
    if not recall:
        return []
    found: list[tuple[str, str, str, bool | None]] = []
    budgets = recall["budgets"]
    for size, figures in recall["session_start"].items():
        ratio_budget = budgets.get("session_start_10k_ratio_to_bare") if size == "10000" else None
        found.append((f"session-start hook, {int(size):,} observations",
                      f"{figures['hook_cpu_ms']} ms CPU = {figures['ratio_to_bare']}× bare python"
                      f" (wall {figures['hook_p50_ms']} ms = {figures['wall_ratio_to_bare']}×)",
                      f"≤ {ratio_budget}× bare" if ratio_budget else "",
                      figures["ratio_to_bare"] <= ratio_budget if ratio_budget else None))
    growth = recall.get("session_start_growth")
    if growth:
        low, high = (f"{int(size) // 1000}k" for size in growth["sizes"])
        found.append((f"session-start hook, {high} / {low}", f"{growth['cpu']}× CPU (wall {growth['wall']}×)",
                      f"≤ {budgets['session_start_100k_over_1k']}×" if high == "100k" else "",
                      growth["cpu"] <= budgets["session_start_100k_over_1k"] if high == "100k" else None))
    for size, prompt in recall.get("user_prompt", {}).items():
        for way, label in (("worker_hybrid", "worker running"), ("keyword_in_hook", "no worker"), ("off", "memory off")):
            figures = prompt.get(way)
            if not isinstance(figures, dict):
                continue
            budget = budgets["user_prompt_ratio_to_bare"] if way == "worker_hybrid" else None
            found.append((f"user-prompt hook, nothing relevant, {int(size):,} observations ({label})",
                          f"{figures['p50_ms']} ms = {figures['ratio_to_bare']}× bare python"
                          f" (CPU {figures['cpu_ms']} ms = {figures['cpu_ratio_to_bare']}×)",
                          f"≤ {budget}× bare" if budget else "", figures["ratio_to_bare"] <= budget if budget else None))
        route = prompt.get("related_route")
        if isinstance(route, dict) and "p50_ms" in route:
            found.append((f"worker's answer to it (POST /api/related), {int(size):,} observations",
                          f"{route['p50_ms']} ms p50, {route['p95_ms']} ms p95", "", None))
    for size, figures in recall["search"].items():
        found.append((f"search, {int(size):,} observations (in process)",
                      f"{figures['p50_ms']} ms p50 = {figures['ratio_to_bare_fts5']}× bare FTS5",
                      f"≤ {budgets['search_p50_100k_ms']} ms", figures["p50_ms"] <= budgets["search_p50_100k_ms"]))
    line = recall.get("statusline")
    if line:
        found.append(("statusline, 10k observations", f"{line['p50_ms']} ms p50 = {line['ratio_to_bare']}× bare python",
                      f"≤ {line['budget_ms']} ms", line["p50_ms"] <= line["budget_ms"]))
    context = recall["context_50"]
    found.append(("session-start context, 50 observations", f"{context['tokens']} tokens",
                  f"≤ {context['budget_tokens']} tokens", context["tokens"] <= context["budget_tokens"]))
    return found


def privacy_rows(privacy: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `privacy` benchmark's figures: leaks per corpus, look-alikes kept, redaction's cost, pathological inputs."""
    if not privacy:
        return []
    targets = privacy["targets"]
    found: list[tuple[str, str, str, bool | None]] = []
    labels = {"held_out": "held-out corpus", "tests": "tests' corpus"}
    for name, label in labels.items():
        corpus = privacy["corpora"].get(name)
        if not corpus:
            found.append((f"secrets, {label}", "not measured: the corpus is missing", "", None))
            continue
        found.append((f"secrets, {label} ({corpus['formats']} formats × {corpus['placements']} placements): hooks → "
                      "observer → backup → next session", f"{corpus['stored']} stored, {corpus['sent']} sent, "
                      f"{corpus['shown']} shown", "0 / 0 / 0", corpus["stored"] == corpus["sent"] == corpus["shown"] == 0))
        found.append((f"secrets, {label}: capture in process", f"{len(corpus['capture_leaks'])} leaks (format × placement)",
                      "0", not corpus["capture_leaks"]))
        found.append((f"secrets, {label}: records a second redaction pass changes", str(corpus["second_pass_changes"]),
                      "0", corpus["second_pass_changes"] == 0))
    for name, label in labels.items():
        kept = privacy["lookalikes"].get(name)
        if kept:
            found.append((f"look-alikes kept verbatim, {label}", f"{kept['kept']}/{kept['total']} = {kept['ratio']}",
                          f"≥ {targets['lookalikes_kept']}", kept["ratio"] >= targets["lookalikes_kept"]))
    real = privacy.get("real_files")
    if real:
        found.append((f"real files of installed packages ({real['files']} files, {real['chars']:,} chars): spans found",
                      f"{real['spans']} = {real['spans_per_mb']} per MB (each a false alarm)", "reported", None))
    cost, budget = privacy["cost"], f"≤ {privacy['cost']['budget_ratio']}× bare"
    found.append(("post-tool hook CPU, 100 KB Read (capture + redaction in process "
                  f"{cost['capture_record_cpu_ms']} ms; clean_tree uncut {cost['clean_tree_cpu_ms']} ms)",
                  f"{cost['hook_cpu_ms']} ms = {cost['ratio']}× bare python CPU", budget, cost["ratio"] <= cost["budget_ratio"]))
    found.append(("post-tool hook CPU, small Bash", f"{cost['hook_small_bash_cpu_ms']} ms = {cost['small_bash_ratio']}× "
                  "bare python CPU", budget, cost["small_bash_ratio"] <= cost["budget_ratio"]))
    cases, summary = privacy["pathological"], privacy["pathological_summary"]
    slowest, slowest_hook = summary["slowest_in_process"], summary["slowest_hook"]
    over = summary["over_target_in_process"]
    found.append((f"redaction of {len(cases)} pathological inputs, in process",
                  f"{len(over)} over target ({', '.join(over)})" if over else f"slowest {slowest['name']}: {slowest['cpu_s']} s",
                  f"≤ {targets['pathological_in_process_cpu_s']} s CPU each", not over))
    failed = summary["hook_failed"] + [name for name in summary["over_target_hook"] if name not in summary["hook_failed"]]
    found.append((f"post-tool hook on {len(cases)} pathological inputs",
                  f"{len(failed)} failed or slow ({', '.join(failed)})" if failed
                  else f"all exit 0; slowest {slowest_hook['name']}: {slowest_hook['wall_s']} s",
                  f"exit 0, kept, ≤ {targets['pathological_hook_wall_s']} s each", not failed))
    return found


def team_rows(team: dict | None) -> list[tuple[str, str, str, bool | None]]:
    if not team:
        return []
    lag, initial, drain = team["lag"], team["initial"], team["drain"]
    return [
        (f"team lag, committed on A → in B's store ({lag['samples']} probes, {lag['interval_s']} s interval)",
         f"p50 {lag['p50_s']} s, p90 {lag['p90_s']} s", f"p50 ≤ {lag['budget_p50_s']} s", lag["p50_s"] <= lag["budget_p50_s"]),
        (f"team push, {initial['observations']:,} observations",
         f"{initial['push_rows_per_s']:,} rows/s = {initial['push_ratio_to_bare']}× bare COPY", "", None),
        (f"team initial pull, {initial['observations']:,} observations",
         f"{initial['pull_rows_per_s']:,} rows/s = {initial['pull_ratio_to_bare']}× bare COPY", "", None),
        (f"team outbox drain after an outage, {drain['rows']:,} rows", f"{drain['rows_per_s']:,} rows/s", "", None),
    ] + join_rows(team.get("join"))


def join_rows(join: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """Issue 32: a fresh data dir joins a project (one `team sync`), beside the bare ceilings of the same run."""
    if not join:
        return []
    return [(f"team join: a fresh data dir pulls {join['rows']:,} rows",
             f"{join['rows_per_s']:,} rows/s ({join['rows_per_cpu_s']:,} a CPU second), first search after"
             f" {join['first_search_s']} s (bare COPY"
             f" {join['bare_copy_rows_per_s']:,}, streamed {join['stream_copy_rows_per_s']:,} rows/s)",
             f"≥ {join['target_rows_per_s']:,} rows/s", join["rows_per_s"] >= join["target_rows_per_s"])]


def team_reconcile_rows(team: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """Issue 32: the reconciliation check's cost on the server; what the row limit and verified
    authorship cost a push."""
    check, push = (team or {}).get("reconcile"), (team or {}).get("authorship_push")
    found: list[tuple[str, str, str, bool | None]] = []
    if check:
        found.append((f"team reconciliation check, {check['observations']:,} observations pushed"
                      f" ({check['rows_on_server']:,} rows on the server)", f"server {check['server_digest_ms']} ms"
                      f" ({check['server_digest_without_index_ms']} ms without its index); whole check"
                      f" {check['whole_check_ms']} ms", f"server ≤ {check['budget_ms']} ms",
                      check["server_digest_ms"] <= check["budget_ms"]))
    if push:
        found.append((f"team push, {push['observations']:,} observations: no size CHECK / CHECK / team init",
                      f"{push['no_check_rows_per_s']:,} / {push['check_rows_per_s']:,} / {push['verified_rows_per_s']:,}"
                      f" rows/s ({push['check_ratio']}× / {push['verified_ratio']}× the time)", "", None))
    return found


def clients_rows(clients: dict) -> list[tuple[str, str, str, bool | None]]:
    """Issue 28, part 6 of the `search` benchmark: the CLI and the MCP server by meaning, answered by a
    running worker, against the CLI by keyword and the worker's own HTTP time (wall p50, CPU beside)."""
    found: list[tuple[str, str, str, bool | None]] = []
    for size, figures in clients.items():
        count = f"{int(size):,}"
        cli, mcp = figures["cli_hybrid_to_keyword"], figures["mcp_hybrid_to_http"]
        found.append((f"`claude-mem search` (hybrid, by the worker) vs `--mode keyword`, {count} observations",
                      f"{figures['cli_hybrid']['p50_ms']} vs {figures['cli_keyword']['p50_ms']} ms = {cli['wall']}×"
                      f" (CPU incl. the worker's {cli['cpu']}×)", f"≤ {cli['budget']}×", cli["wall"] <= cli["budget"]))
        found.append((f"MCP search tool by meaning vs the worker's HTTP hybrid search, {count} observations",
                      f"{figures['mcp_hybrid']['p50_ms']} vs {figures['http_hybrid']['p50_ms']} ms = {mcp['wall']}×"
                      f" (CPU {mcp['cpu']}×)", f"≤ {mcp['budget']}×", mcp["wall"] <= mcp["budget"]))
        memory = figures["mcp_server_memory"]
        found.append((f"MCP server resident memory after those searches, {count} observations",
                      f"{memory['rss_mb']} MB (peak {memory['peak_rss_mb']} MB)", "", None))
        settled = figures["worker_settled_s"]
        found.append((f"worker idle (vector index built) before those searches, {count} observations",
                      f"after {settled} s" if settled is not None else "still busy: figures include its work", "", None))
    return found


def search_rows(search: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `search` benchmark's figures: embedding, backfill, search by meaning, and keyword search on every
    surface at each store size."""
    if not search:
        return []
    budgets = search["budgets"]
    found: list[tuple[str, str, str, bool | None]] = []
    if "unavailable" in search:
        found.append(("search by meaning", f"not measured: {search['unavailable']}", "", None))
    elif "observations" in search:  # not with --clients-only
        size = f"{search['observations']:,}"
        throughput, backfill, in_process = search["throughput"], search["backfill"], search["in_process"]
        found += [
            (f"embedding throughput (batch {throughput['batch']}, 1 thread)", f"{throughput['rows_per_s']} rows/s", "", None),
            (f"embedding backfill, {backfill['rows']:,} rows", f"{backfill['seconds']} s = {backfill['rows_per_s']} rows/s",
             "", None),
        ]
        for mode in ("hybrid", "keyword", "semantic"):
            figures = in_process[mode]
            budget = f"≤ {budgets['hybrid_p50_ms']} ms" if mode == "hybrid" else ""
            found.append((f"{mode} search, {size} observations (in process)",
                          f"{figures['p50_ms']} ms p50 = {figures['ratio_to_bare_fts5']}× bare FTS5", budget,
                          figures["p50_ms"] <= budgets["hybrid_p50_ms"] if mode == "hybrid" else None))
        repeated = in_process["hybrid_repeated_query"]
        found.append((f"hybrid search, {size} observations, repeated query (embedding kept)",
                      f"{repeated['p50_ms']} ms p50 = {repeated['ratio_to_bare_fts5']}× bare FTS5", "", None))
        found.append((f"hybrid search over HTTP, {size} observations", f"{search['http_hybrid']['p50_ms']} ms p50", "", None))
        memory = search["worker_memory"]
        found.append(("worker resident memory, model loaded", f"{memory['rss_mb']} MB (peak {memory['peak_rss_mb']} MB)",
                      f"≤ {memory['budget_mb']} MB", memory["rss_mb"] <= memory["budget_mb"]))
    found += clients_rows(search.get("clients", {}))
    for size, surfaces in search.get("surfaces", {}).items():
        count = f"{int(size):,}"
        http, mcp, cli = surfaces["http_keyword"], surfaces["mcp_keyword"], surfaces["cli_keyword"]
        found.append((f"bare FTS5 top-20 query, {count} observations (in process)",
                      f"{http['bare_fts5_top20_p50_ms']} ms p50, {http['bare_fts5_top20_p90_ms']} ms p90", "", None))
        # Judged on CPU time (the worker's, every thread; the bare query's thread): this machine is shared.
        ratio_budget = budgets["http_ratio_to_bare_fts5"] if size == "10000" else None
        plain = http.get("without_snippets")
        found.append((f"keyword search over HTTP (kept-alive), {count} observations",
                      f"CPU {http['cpu_p50_ms']} ms p50 = {http['cpu_ratio_to_bare_fts5']}× bare FTS5 (wall {http['p50_ms']} ms"
                      f" = {http['ratio_to_bare_fts5']}×" + (f"; snippets=false: CPU {plain['cpu_ratio_to_bare_fts5']}×"
                                                             if plain else "") + ")",
                      f"≤ {ratio_budget}× bare" if ratio_budget else "",
                      http["cpu_ratio_to_bare_fts5"] <= ratio_budget if ratio_budget else None))
        original = budgets["original_http_p90_100k_ms"] if size == "100000" else None
        found.append((f"keyword search over HTTP, {count} observations, p90",
                      f"CPU {http['cpu_p90_ms']} ms p90 (wall {http['p90_ms']} ms)",
                      f"≤ {original} ms (the original's)" if original else "",
                      http["cpu_p90_ms"] <= original if original else None))
        mcp_budget = budgets["mcp_ratio_to_bare_fts5"]
        found.append((f"MCP search tool (keyword, stdio), {count} observations",
                      f"CPU {mcp['cpu_p50_ms']} ms p50 = {mcp['cpu_ratio_to_bare_fts5']}× bare FTS5 (wall {mcp['p50_ms']} ms"
                      f" = {mcp['ratio_to_bare_fts5']}×)",
                      f"≤ {mcp_budget}× bare", mcp["cpu_ratio_to_bare_fts5"] <= mcp_budget))
        found.append((f"`claude-mem search --mode keyword`, {count} observations",
                      f"{cli['p50_ms']} ms wall p50 (bare python {cli['bare_python_p50_ms']} ms)",
                      f"≤ {budgets['cli_keyword_ms']} ms", cli["p50_ms"] <= budgets["cli_keyword_ms"]))
    return found


def export_rows(export: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `export` benchmark's figures: export and import throughput, memory at 5× the rows, reproducibility."""
    if not export:
        return []
    size, flat = f"{export['observations']:,}", export["memory_flat"]
    found: list[tuple[str, str, str, bool | None]] = []
    for name, baseline in (("export", "bare JSON dump"), ("import", "bare insert")):
        figures = export[name]
        found.append((f"{name} jsonl, {size} observations ({export['records']:,} records)",
                      f"{figures['rows_per_s']:,} rows/s = {figures['ratio_to_bare']}× {baseline}", "", None))
        growth = flat[f"{name}_growth"]
        found.append((f"{name} jsonl, peak Python memory at {flat['small_observations']:,} → {size} observations",
                      " → ".join(f"{mb} MB" for mb in flat[f"{name}_peak_mb"]), "flat (≤ 1.5×)", growth <= 1.5))
    dry = export.get("dry_run")
    if dry:
        found.append((f"import jsonl --dry-run, {size} observations", f"{dry['rows_per_s']:,} rows/s = "
                      f"{dry['ratio_to_import']}× the import (all present: {dry['all_present_ratio_to_import']}×)",
                      "< 1× (reads only)", dry["ratio_to_import"] < 1))
    found.append(("export → import → export", "identical" if export["reexport_identical"] else "different",
                  "identical", export["reexport_identical"]))
    return found


def vector_rows(ann: dict | None, vectors: dict | None) -> list[tuple[str, str, str, bool | None]]:
    """The `ann` (vector index libraries) and `vectors` (search by meaning at scale) benchmarks' figures."""
    return ann_rows(ann) + scale_rows(vectors)


def ann_rows(ann: dict | None) -> list[tuple[str, str, str, bool | None]]:
    found: list[tuple[str, str, str, bool | None]] = []
    if ann and "unavailable" in ann:
        found.append(("vector index libraries", f"not measured: {ann['unavailable']}", "", None))
    elif ann:
        found.append(("vector index libraries: data", ann["data"]["note"], "", None))
        for size, methods in ann["sizes"].items():
            for method, figures in methods.items():
                chosen = figures.get("chosen")
                if not chosen:
                    found.append((f"{method}, {int(size):,} vectors", figures.get("unavailable") or "failed", "", None))
                    continue
                params = (f" (M {chosen['connectivity']}, ef_add {chosen['expansion_add']}, ef {chosen['expansion_search']})"
                          if chosen["connectivity"] else "")
                forget = chosen["forget"]
                removal = "removal: " + ("no" if not forget["removal"] else "bytes gone" if forget["bytes_gone"]
                                         else "bytes left in the file" if forget["bytes_gone"] is False else "yes")
                found.append((f"{method}{params}, {int(size):,} vectors",
                              f"p50 {chosen['p50_ms']} ms = {chosen['ratio_to_exact_f32']}× exact f32, p95 {chosen['p95_ms']}"
                              f" ms, recall@10 {chosen['recall_at_10']}, build {chosen['build_s']} s, "
                              f"{chosen['bytes_per_vector']:g} B/vector, RSS +{chosen['rss_growth_mb']} MB, {removal}",
                              f"recall ≥ {ann['recall_target']}", chosen["recall_at_10"] >= ann["recall_target"]))
        wheels = ann.get("wheels")
        if wheels and "packages" in wheels:
            for package, platforms in wheels["packages"].items():
                found.append((f"{package} wheels, cp311 ({wheels['checked']})",
                              ", ".join(f"{name} " + (f"{got['mb']} MB" if got else "none") for name, got in platforms.items()),
                              "", None))
    return found


def scale_rows(vectors: dict | None) -> list[tuple[str, str, str, bool | None]]:
    found: list[tuple[str, str, str, bool | None]] = []
    if vectors and "unavailable" in vectors:
        found.append(("search by meaning at scale", f"not measured: {vectors['unavailable']}", "", None))
    elif vectors:
        budgets = vectors["budgets"]
        found.append(("search by meaning at scale: data", vectors["data"], "", None))
        for size, figures in vectors["bytes"].items():
            per, ratio = figures["bytes_per_observation"], figures["ratio_with_vectors"]
            limit = budgets["bytes_ratio_100k"] if size == "100000" else None
            found.append((f"DB bytes per observation, {int(size):,} observations ({figures['vector_bytes_each']} B a vector)",
                          f"{per['ours_with_vectors']} with vectors = {ratio}× the original's {per['original']}; "
                          f"{per['ours_without_vectors']} without = {figures['ratio_without_vectors']}×",
                          f"≤ {limit}× the original's" if limit else "", ratio <= limit if limit else None))
        for size, figures in vectors["search"].items():
            auto, exact, count = figures["auto"], figures["exact"], f"{int(size):,}"
            limit = figures.get("budget_p50_ms")
            note = f"; answers {', '.join(auto['modes'])}" + (f", {auto['degraded_answers']} degraded" if auto["degraded_answers"]
                                                             else "")
            index = auto.get("index") or {}
            found.append((f"hybrid search over HTTP, {count} observations (default index: {index.get('kind', 'not said')})",
                          f"p50 {auto['p50_ms']} ms = {auto['ratio_to_exact']}× exact ({exact['p50_ms']} ms), p95 "
                          f"{auto['p95_ms']} ms; CPU p50 {auto['cpu_p50_ms']} ms = {auto['cpu_ratio_to_exact']}× exact's{note}",
                          f"≤ {limit:g} ms" if limit else "",
                          auto["p50_ms"] <= limit if limit else None))
            parts = figures.get("parts")
            if parts:
                found.append((f"hybrid's halves alone, {count} observations (default index)",
                              "; ".join(f"{mode} p50 {part['p50_ms']} ms (CPU {part['cpu_p50_ms']} ms)"
                                        for mode, part in parts.items()), "", None))
            found.append((f"hybrid search, {count} observations: exact search's top {20} found by the default index",
                          f"{figures['overlap_with_exact']:.1%}", "", None))
            found.append((f"worker RSS, {count} observations with vectors (default index; exact)",
                          f"{auto['rss_mb']} MB (peak {auto['peak_rss_mb']}); {exact['rss_mb']} MB",
                          f"≤ {budgets['worker_rss_mb']:g} MB", auto["rss_mb"] <= budgets["worker_rss_mb"]))
            batch = figures["batch_query"]
            limit = budgets["batch_query_ms_1m"] if size == "1000000" else None
            found.append((f"backfill's batch query, {count} observations", f"longest {batch['pick_max_ms']} ms (p50 "
                          f"{batch['pick_p50_ms']} ms, none left {batch['pick_when_none_left_ms']} ms)",
                          f"≤ {limit:g} ms" if limit else "", batch["pick_max_ms"] <= limit if limit else None))
        backfill = vectors["backfill"]
        found.append((f"backfill from zero by a real worker, {backfill['seconds']:g} s",
                      f"{backfill['rows_per_s']} rows/s (RSS {backfill['rss_mb']} MB, peak {backfill['peak_rss_mb']})",
                      f"≥ {budgets['backfill_rows_per_s']:g} rows/s", backfill["rows_per_s"] >= budgets["backfill_rows_per_s"]))
    return found


def print_table(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="claude-mem benchmarks (JSON on stdout)")
    for column in ("figure", "value", "budget", ""):
        table.add_column(column)
    for figure, value, budget, within in rows(report):
        table.add_row(figure, value, budget, "" if within is None else "✓" if within else "✗ over")
    Console(stderr=True).print(table)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
