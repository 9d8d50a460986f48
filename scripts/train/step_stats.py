#!/usr/bin/env python3
# step_stats.py: what the agent's replies look like in a `kvarena run` database, the
# learning curve's second measure (models/README.md): per policy, the tasks and successes,
# the steps, the share whose reply parsed as an action, and the share whose action names an
# element ([id]) that is in that step's observation; and of the episodes that end with a
# stop, how many answer by element ("stop [[84]]", agent/agent-action.h), how many of those
# the page resolved, and the successes of each kind.
#   scripts/train/step_stats.py RUN.sqlite
import json
import re
import sqlite3
import sys

ELEMENT = re.compile(r"^(click|type|hover|clear)\s*\[(\d+)\]")
BY_ELEMENT = re.compile(r"```\s*stop\s*\[\[\d+\]\]\s*```")


def main(path):
    db = sqlite3.connect(path)
    out = []
    for (policy,) in db.execute("SELECT DISTINCT policy FROM task_results ORDER BY policy"):
        tasks, solved = db.execute("SELECT COUNT(*), COALESCE(SUM(success), 0) FROM task_results WHERE policy = ?",
                                   (policy,)).fetchone()
        steps = parsed = named = on_page = 0
        for action, observation in db.execute("SELECT action, observation FROM steps WHERE policy = ?", (policy,)):
            steps += 1
            if action and action != "none":
                parsed += 1
            m = ELEMENT.match(action or "")
            if m:
                named += 1
                on_page += ("[" + m.group(2) + "]") in observation
        answers = {"stops": 0, "by_element": 0, "by_element_resolved": 0, "by_element_success": 0,
                   "text_success": 0}
        for output, error, success in db.execute(
                "SELECT s.output, s.action_error, t.success FROM steps s JOIN task_results t USING "
                "(run_id, task_id, policy, seed) WHERE s.policy = ? AND s.step = t.steps - 1 AND s.action LIKE 'stop%'",
                (policy,)):
            answers["stops"] += 1
            if BY_ELEMENT.search(output or ""):
                answers["by_element"] += 1
                answers["by_element_resolved"] += not (error or "").startswith("stop [[")
                answers["by_element_success"] += success
            else:
                answers["text_success"] += success
        out.append({"policy": policy, "tasks": tasks, "success": solved, "steps": steps,
                    "parsed": round(parsed / max(steps, 1), 3), "names_element": named,
                    "element_on_page": round(on_page / max(named, 1), 3), "answers": answers})
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: step_stats.py RUN.sqlite")
    main(sys.argv[1])
