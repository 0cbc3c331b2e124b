"""Cost accuracy: what the-loop recorded of each turn (the store's `costs()`) against what the model
API's stand-in served for it, with the real Claude Code and the real Codex.

    .venv/bin/python -m bench.costs                    # 10 comments per agent, seed 1
    .venv/bin/python -m bench.costs --comments 30 --seed 7 --agents codex
    .venv/bin/python -m bench.costs --quick --json     # CI's form: 2 comments per agent, the figures as JSON

Everything is real but the tracker and the model API: the daemon (`poll`, SQLite) with the sandbox
tracker, real tmux, the pinned agent offline on its stand-in (bench/costs/run.py). Each turn's model
requests are served a usage drawn from the seed (bench/costs/plan.py): one request, or a tool call and
then the answer; cache writes (Claude's) and reads. The stand-in's model is priced by a
`pricing.models` entry. Tokens must be equal, per kind; money within the table's rounding (half a
micro-dollar a turn). What the stand-ins served that is no turn's (Codex's task titles, Claude Code's
side requests) is counted apart and not held to the store. Exit 1 on any mismatch.
"""
