#!/usr/bin/env bash
# chaos.sh: fault injection against `kvarena run` and `kvarena env-server`, each case a test
# of what a user loses, with its figures printed as a table (the README keeps a copy).
#
#   scripts/chaos.sh            full mode, by hand (~13 minutes on 2 cores)
#   scripts/chaos.sh --short    CI mode (~2 minutes on 2 cores; ctest: chaos-short)
#   KVARENA=build-x/kvarena scripts/chaos.sh --short --keep    (--keep: leave the work folder)
#   scripts/chaos.sh --short --only=chromium-kill,soak          (some cases only)
#
# Cases (PASS/FAIL each; the exit status is 1 when any case fails, 77 when kvarena or
# python3 is missing; a case that cannot run here is SKIP with the reason):
#   kill-resume   `run` SIGKILLed at random moments K times (20 full, 5 short), then
#                 `--resume`: the same (task, policy, seed, status, success, steps) rows as an
#                 uninterrupted run, step rows alike, 0 lost, 0 duplicated, integrity_check ok.
#   disk-full     results on a 4 MiB tmpfs that fills: the run stops non-zero with a message
#                 naming the file and the full disk, the file passes integrity_check, and
#                 `--resume` on a copy elsewhere completes it (same rows as a run on disk).
#                 Mounting needs root: SKIP otherwise.
#   chromium-kill `run --browser chromium` (the model agent) with its Chromium SIGKILLed
#                 mid-episode (1 time short, 3 full): every item has a row, the hit one an
#                 error row (or retried), never a done row of failed steps; no Chromium process
#                 or profile folder left; `--resume` completes the run.
#   env-restart   `run --env-url` against an env server that is SIGKILLed mid-run and started
#                 again on the same port: its items are error rows, none lost, `--resume`
#                 completes them with the rows of an uninterrupted run.
#   soak          S sessions (64 full, 16 short) stepping against `kvarena env-server` for T
#                 (600 s full, 20 s short): resident memory growth after warm-up, p50/p99 step
#                 latency, errors (5xx other than 503, no answer).
#   creations     N session creations without deletion (10,000 full, 2,000 short) against a
#                 server of 256 sessions: 201 until full then 503 (or 4xx), no crash, memory
#                 bounded; then create+delete churn (N/4): memory back near the full table's.
# The model cases use the shipped model (models/kvarena-agent.gguf) with few steps and the
# window policy plus the scripted oracle (--with-oracle), greedy, one thread per item, so an
# interrupted run must give exactly the rows of an uninterrupted one.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=full
KEEP=0
ONLY=""
for arg in "$@"; do
  case "$arg" in
    --short) MODE=short ;;
    --keep) KEEP=1 ;;
    --only=*) ONLY="${arg#--only=}" ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "chaos.sh: unknown argument $arg (--short, --keep, --only=CASE,...)" >&2; exit 2 ;;
  esac
done
KVARENA="${KVARENA:-$ROOT/build/kvarena}"
case "$KVARENA" in /*) ;; *) KVARENA="$PWD/$KVARENA" ;; esac
PY="$(command -v /usr/bin/python3 || command -v python3 || true)"
SUITE="$ROOT/tasks/vwa-local"
MODEL="$ROOT/models/kvarena-agent.gguf"
[ -x "$KVARENA" ] || { echo "chaos.sh: no kvarena binary at $KVARENA (build it, or set KVARENA)" >&2; exit 77; }
[ -n "$PY" ] || { echo "chaos.sh: needs python3 (standard library only)" >&2; exit 77; }
[ -f "$MODEL" ] || { echo "chaos.sh: needs $MODEL" >&2; exit 77; }

if [ "$MODE" = short ]; then
  KILLS=5 KILL_LIMIT=4 ENV_LIMIT=4 CHROME_LIMIT=4 CHROME_KILLS=1 SOAK_SESSIONS=16 SOAK_S=20 CREATIONS=2000
else
  KILLS=20 KILL_LIMIT=12 ENV_LIMIT=12 CHROME_LIMIT=12 CHROME_KILLS=3 SOAK_SESSIONS=64 SOAK_S=600 CREATIONS=10000
fi
# One configuration for every model run: window policy, 2 steps, greedy, a thread per item.
RUN_ARGS=(--suite "$SUITE" --model "$MODEL" --policies window --with-oracle --max-steps 2 -t 1 -j 1 --name chaos)
SEED="${CHAOS_SEED:-$RANDOM}"
RANDOM=$SEED

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kvarena-chaos-XXXXXX")"
PIDS=()      # background processes this script started (killed by id at exit)
MOUNTED=""   # the tmpfs mounted by disk-full
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null
  if [ "$KEEP" = 1 ]; then echo "chaos.sh: work folder kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "[chaos $(date +%H:%M:%S)] $*" >&2; }
ROWS=()
FAILS=0
record() {  # record CASE RESULT FIGURES
  ROWS+=("| $1 | $2 | $3 |")
  [ "$2" = FAIL ] && FAILS=$((FAILS + 1))
  log "$1: $2: $3"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# wait_for PID SECONDS: wait for a background process with a deadline; its exit status, or
# 124 after killing it at the deadline.
wait_for() {
  local pid=$1 limit=$2 t0
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    if [ $(( $(date +%s) - t0 )) -ge "$limit" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 124; fi
    sleep 0.1
  done
  wait "$pid"
}
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# The python3 helper: results-file checks and the env API clients (standard library only).
cat > "$WORK/chaos.py" <<'PYEOF'
import http.client, json, os, random, re, sqlite3, sys, threading, time, urllib.parse

def ro(db):
    return sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(db)), uri=True, timeout=10)

def cmd_count(db):  # task_results rows of the file (-1 when it cannot be read now)
    try:
        print(ro(db).execute("select count(*) from task_results").fetchone()[0])
    except Exception:
        print(-1)

def load(db):
    c = ro(db)
    integ = ";".join(r[0] for r in c.execute("pragma integrity_check"))
    rows = {}
    for t, p, s, st, ok, n in c.execute("select task_id, policy, seed, status, success, steps from task_results"):
        rows.setdefault((t, p, s), []).append((st, ok, n))
    steps = {}
    for t, p, s, n in c.execute("select task_id, policy, seed, count(*) from steps group by 1, 2, 3"):
        steps[(t, p, s)] = n
    dup_steps = c.execute("select count(*) from (select 1 from steps group by run_id, task_id, policy, seed, step "
                          "having count(*) > 1)").fetchone()[0]
    runs = c.execute("select count(*) from runs").fetchone()[0]
    return integ, rows, steps, dup_steps, runs

def cmd_compare(ref, db, subset):
    """Rows of db against ref: lost, duplicated, differing; exit 1 unless all clean."""
    _, rref, sref, _, _ = load(ref)
    integ, rows, steps, dup_steps, runs = load(db)
    dup = sum(len(v) - 1 for v in rows.values()) + dup_steps
    keys = set(rows) if subset else set(rref)
    lost = sorted(k for k in keys if k in rref and k not in rows)
    extra = sorted(k for k in rows if k not in rref)
    differ = sorted(k for k in keys if k in rows and k in rref and rows[k][0] != rref[k][0])
    step_differ = sorted(k for k in keys if k in rows and k in rref and steps.get(k, 0) != sref.get(k, 0))
    orphan = sorted(k for k in steps if k not in rows)
    status = {}
    for v in rows.values():
        status[v[0][0]] = status.get(v[0][0], 0) + 1
    print("rows=%d lost=%d duplicated=%d differ=%d step_rows_differ=%d orphan_steps=%d extra=%d runs=%d "
          "integrity=%s status=%s" % (len(rows), len(lost), dup, len(differ), len(step_differ), len(orphan),
                                      len(extra), runs, integ, ",".join("%s:%d" % kv for kv in sorted(status.items()))))
    for what, ks in (("lost", lost), ("differ", differ), ("step_rows_differ", step_differ), ("orphan", orphan),
                     ("extra", extra)):
        for k in ks[:5]:
            print("  %s: %s ref=%s got=%s" % (what, k, rref.get(k), rows.get(k)), file=sys.stderr)
    clean = not (lost or dup or differ or step_differ or orphan or extra) and integ == "ok" and runs == 1
    sys.exit(0 if clean else 1)

def cmd_status(db):  # "done:N,error:M ...", done rows that met a dead browser, the first error
    c = ro(db)
    st = c.execute("select status, count(*) from task_results group by 1 order by 1").fetchall()
    err = c.execute("select task_id || ' ' || policy || ': ' || substr(error, 1, 120) from task_results "
                    "where status != 'done' limit 1").fetchone()
    gone = c.execute("select count(*) from task_results r where status = 'done' and exists (select 1 from steps s "
                     "where s.run_id = r.run_id and s.task_id = r.task_id and s.policy = r.policy and s.seed = r.seed "
                     "and (s.action_error like '%browser of this session is gone%' "
                     "or s.observation like 'Error: %browser of this session is gone%'))").fetchone()[0]
    print(",".join("%s:%d" % r for r in st) + "\t" + str(gone) + "\t" + (err[0].replace("\n", " ") if err else ""))

def load_tasks(suite):
    out = []
    for name in sorted(os.listdir(suite), key=lambda n: (len(n), n)):
        if name.endswith(".json") and name[:-5].isdigit():
            with open(os.path.join(suite, name)) as f:
                out.append(json.load(f))
    return out

class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.conn = None
    def call(self, method, path, body=None):
        """(status, json or None); status 0 when no answer (connection refused or reset)."""
        for attempt in range(2):  # one reconnect: the server may have closed an idle keep-alive
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
                data = json.dumps(body).encode() if body is not None else None
                self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
                r = self.conn.getresponse()
                raw = r.read()
                try:
                    return r.status, json.loads(raw)
                except ValueError:
                    return r.status, None
            except (OSError, http.client.HTTPException):
                if self.conn: self.conn.close()
                self.conn = None
                if attempt == 1: return 0, None
        return 0, None

def create_body(task):
    return {"task": task, "browser": "text",
            "early_stop": {"max_steps": 100000, "parse_failures": 100000, "repeated_actions": 100000}}

def rss_kib(pid):  # resident KiB of the process (0 once it is gone)
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"): return int(line.split()[1])
    except OSError:
        return 0
    return 0

def pct(xs, q):
    if not xs: return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]

def cmd_soak(url, suite, seconds, sessions, pid):
    """`sessions` clients, each: create a session, step it (clicks on the page's elements,
    scrolls, go_back) 30 times, delete it, again, until `seconds` are up."""
    tasks = load_tasks(suite)
    seconds, sessions, pid = float(seconds), int(sessions), int(pid)
    lock = threading.Lock()
    lat, errors, codes = [], [], {}
    counts = {"steps": 0, "creates": 0, "deletes": 0, "action_errors": 0}
    t0 = time.time()
    warm_at = t0 + min(60.0, seconds * 0.25)
    rss = {}
    def bump(code):
        with lock: codes[code] = codes.get(code, 0) + 1
    def client(k):
        rnd = random.Random(k)
        c = Client(url)
        while time.time() - t0 < seconds:
            task = tasks[rnd.randrange(len(tasks))]
            st, j = c.call("POST", "/v1/sessions", create_body(task))
            bump(st)
            if st != 201:
                with lock: errors.append("create %d %s" % (st, j))
                time.sleep(0.2)
                continue
            with lock: counts["creates"] += 1
            sid, obs = j["session_id"], j["observation"]["text"]
            for _ in range(30):
                if time.time() - t0 >= seconds: break
                ids = re.findall(r"\[(\d+)\]", obs)
                x = rnd.random()
                if ids and x < 0.7: action = "click [%s]" % rnd.choice(ids)
                elif x < 0.85: action = "scroll [%s]" % rnd.choice(["down", "up"])
                else: action = "go_back"
                s0 = time.time()
                st, j = c.call("POST", "/v1/sessions/%s/step" % sid, {"action": action})
                dt = (time.time() - s0) * 1000
                bump(st)
                if st != 200:
                    with lock: errors.append("step %d %s" % (st, j))
                    break
                with lock:
                    lat.append(dt)
                    counts["steps"] += 1
                    if j.get("action_error"): counts["action_errors"] += 1
                obs = j["observation"]["text"]
                if j.get("done"): break
            st, _ = c.call("DELETE", "/v1/sessions/%s" % sid)
            bump(st)
            if st == 200:
                with lock: counts["deletes"] += 1
            else:
                with lock: errors.append("delete %d" % st)
    threads = [threading.Thread(target=client, args=(k,)) for k in range(sessions)]
    for t in threads: t.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        time.sleep(0.5)
        r = rss_kib(pid)
        peak = max(peak, r)
        if "warm" not in rss and time.time() >= warm_at: rss["warm"] = r
    for t in threads: t.join()
    rss["end"] = rss_kib(pid)
    out = dict(counts, seconds=round(time.time() - t0, 1), p50_ms=round(pct(lat, 0.5), 1),
               p99_ms=round(pct(lat, 0.99), 1), errors=len(errors), codes=codes,
               rss_warm_kib=rss.get("warm", 0), rss_end_kib=rss["end"], rss_peak_kib=peak,
               first_errors=errors[:3])
    print(json.dumps(out))

def cmd_creations(url, suite, n, threads, pid):
    """n session creations without deletion from `threads` clients (the table fills, then
    503s), then the sessions deleted and n/4 create+delete pairs; resident memory at each
    point, the status codes."""
    tasks = load_tasks(suite)
    n, threads, pid = int(n), int(threads), int(pid)
    lock = threading.Lock()
    codes, ids = {}, []
    nxt = [0]
    def creator(k):
        c = Client(url)
        while True:
            with lock:
                if nxt[0] >= n: return
                i = nxt[0]; nxt[0] += 1
            st, j = c.call("POST", "/v1/sessions", create_body(tasks[i % len(tasks)]))
            with lock:
                codes[st] = codes.get(st, 0) + 1
                if st == 201: ids.append(j["session_id"])
    rss0 = rss_kib(pid)
    t0 = time.time()
    ts = [threading.Thread(target=creator, args=(k,)) for k in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    fill_s = time.time() - t0
    rss_full = rss_kib(pid)
    c = Client(url)
    hst, health = c.call("GET", "/v1/health")
    deleted = 0
    for sid in ids:
        st, _ = c.call("DELETE", "/v1/sessions/%s" % sid)
        deleted += st == 200
    rss_deleted = rss_kib(pid)
    churn_codes = {}
    def churner(k):
        cc = Client(url)
        while True:
            with lock:
                if nxt[0] >= n + n // 4: return
                i = nxt[0]; nxt[0] += 1
            st, j = cc.call("POST", "/v1/sessions", create_body(tasks[i % len(tasks)]))
            with lock: churn_codes[st] = churn_codes.get(st, 0) + 1
            if st == 201:
                st2, _ = cc.call("DELETE", "/v1/sessions/%s" % j["session_id"])
                with lock: churn_codes["del%d" % st2] = churn_codes.get("del%d" % st2, 0) + 1
    ts = [threading.Thread(target=churner, args=(k,)) for k in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    hst2, health2 = c.call("GET", "/v1/health")
    print(json.dumps({"codes": codes, "fill_s": round(fill_s, 1), "created": len(ids), "deleted": deleted,
                      "max_sessions": (health or {}).get("max_sessions"), "health": hst,
                      "churn_codes": churn_codes, "health_after": hst2,
                      "sessions_after": (health2 or {}).get("sessions"),
                      "rss_start_kib": rss0, "rss_full_kib": rss_full, "rss_deleted_kib": rss_deleted, "rss_end_kib": rss_kib(pid)}))

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "count": cmd_count(*args)
    elif cmd == "compare": cmd_compare(args[0], args[1], len(args) > 2 and args[2] == "subset")
    elif cmd == "status": cmd_status(*args)
    elif cmd == "soak": cmd_soak(*args)
    elif cmd == "creations": cmd_creations(*args)
    else: sys.exit("chaos.py: unknown command " + cmd)
PYEOF
chaospy() { "$PY" "$WORK/chaos.py" "$@"; }
jget() {  # jget JSON KEY: the value, JSON text unless a string or a number
  "$PY" -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(v if isinstance(v, (str, int, float)) else json.dumps(v, separators=(",", ":")))' "$@"
}
stop_pid() { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
healthy() {  # healthy URL SECONDS: GET /v1/health answers 200
  "$PY" -c 'import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1] + "/v1/health", timeout=float(sys.argv[2])).status != 200)' "$1" "$2" > /dev/null 2>&1
}

# start_env_server PORT LOG [ARGS]: a `kvarena env-server` in the background; sets ENV_PID and
# ENV_URL once it answers /v1/health (PORT 0: a free one).
start_env_server() {
  local port=$1 logf=$2; shift 2
  "$KVARENA" env-server --port "$port" "$@" > "$logf.out" 2>> "$logf" &
  ENV_PID=$!
  PIDS+=("$ENV_PID")
  ENV_URL=""
  local i
  for i in $(seq 1 100); do
    ENV_URL="$(head -n1 "$logf.out" 2>/dev/null)"
    if [ -n "$ENV_URL" ] && healthy "$ENV_URL" 2; then return 0; fi
    kill -0 "$ENV_PID" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

log "mode $MODE, kvarena $KVARENA, work folder $WORK, random seed $SEED (CHAOS_SEED=$SEED repeats the kill moments)"
T_START=$(now)

# ---------------------------------------------------------------------------------------
# The uninterrupted reference run: every comparison below is against its rows.
REF="$WORK/ref/chaos.sqlite"
ref_rc=0 REF_S=1
if [ -z "$ONLY" ] || [[ ",$ONLY," == *,kill-resume,* || ",$ONLY," == *,env-restart,* ]]; then
  t0=$(now)
  "$KVARENA" run "${RUN_ARGS[@]}" --limit "$KILL_LIMIT" --out "$REF" > /dev/null 2> "$WORK/ref.log"
  ref_rc=$?
  REF_S=$(elapsed "$t0")
  log "reference run: exit $ref_rc, ${REF_S}s, $(chaospy status "$REF" 2>/dev/null | cut -f1)"
fi

# ---------------------------------------------------------------------------------------
case_kill_resume() {
  local dir="$WORK/kill" db="$WORK/kill/chaos.sqlite" i delay pid hits=0 early=0 rc max_ms
  mkdir -p "$dir"
  # Kill moments uniform in [50 ms, max_ms]: about twice the reference's time per kill, so
  # the K kills land across the whole run (each restart also pays model load and env start).
  max_ms=$(awk -v s="$REF_S" -v k="$KILLS" 'BEGIN { m = int(2000 * s / k); print (m < 400 ? 400 : m) }')
  local moments=()
  for i in $(seq 1 "$KILLS"); do
    delay=$((50 + (RANDOM * 32768 + RANDOM) % (max_ms - 50)))
    "$KVARENA" run "${RUN_ARGS[@]}" --limit "$KILL_LIMIT" --out "$db" --resume > /dev/null 2>> "$dir/runs.log" &
    pid=$!
    PIDS+=("$pid")
    sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid"
      hits=$((hits + 1))
      moments+=("$delay")
    else
      early=$((early + 1))
    fi
    wait "$pid" 2>/dev/null
    log "kill $i: after ${delay} ms ($(chaospy count "$db") rows)"
  done
  "$KVARENA" run "${RUN_ARGS[@]}" --limit "$KILL_LIMIT" --out "$db" --resume > /dev/null 2>> "$dir/runs.log"
  rc=$?
  local cmp cmp_rc
  cmp="$(chaospy compare "$REF" "$db" 2>> "$dir/runs.log")"
  cmp_rc=$?
  local fig="$KILLS SIGKILLs ($hits mid-run, $early after the run ended; moments 50-${max_ms} ms), final --resume exit $rc; $cmp"
  if [ "$ref_rc" = 0 ] && [ "$rc" = 0 ] && [ "$cmp_rc" = 0 ] && [ "$hits" -ge $((KILLS / 2)) ]; then
    record kill-resume PASS "$fig"
  else
    record kill-resume FAIL "$fig (reference exit $ref_rc; a pass needs >= $((KILLS / 2)) mid-run kills)"
  fi
}

# ---------------------------------------------------------------------------------------
case_disk_full() {
  local dir="$WORK/disk" mnt="$WORK/disk/tmpfs" rc rc2 err
  mkdir -p "$mnt" "$dir/ref" "$dir/elsewhere"
  if ! mount -t tmpfs -o size=4m tmpfs "$mnt" 2> "$dir/mount.err"; then
    record disk-full SKIP "mount -t tmpfs not permitted here ($(head -c 100 "$dir/mount.err" | tr '\n' ' ')); needs root"
    return
  fi
  MOUNTED="$mnt"
  # The oracle over the whole suite, 3 seeds: its step rows (pages) fill 4 MiB in seconds.
  local args=(--suite "$SUITE" --agent oracle --seeds 3 --name fill)
  "$KVARENA" run "${args[@]}" --out "$dir/ref/fill.sqlite" > /dev/null 2> "$dir/ref.log"
  "$KVARENA" run "${args[@]}" --out "$mnt/fill.sqlite" > /dev/null 2> "$dir/run.log"
  rc=$?
  err="$(grep -m1 -i "disk is full" "$dir/run.log")"
  local used rows integ
  used=$(df -k "$mnt" | awk 'NR == 2 { print $3 "/" $2 " KiB" }')
  integ=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])' "$mnt/fill.sqlite" 2>&1)
  rows=$(chaospy count "$mnt/fill.sqlite")
  cp "$mnt"/fill.sqlite* "$dir/elsewhere/"
  umount "$mnt" && MOUNTED=""
  "$KVARENA" run "${args[@]}" --out "$dir/elsewhere/fill.sqlite" --resume > /dev/null 2> "$dir/resume.log"
  rc2=$?
  local cmp cmp_rc
  cmp="$(chaospy compare "$dir/ref/fill.sqlite" "$dir/elsewhere/fill.sqlite" 2>> "$dir/resume.log")"
  cmp_rc=$?
  local fig="tmpfs 4 MiB ($used used): run exit $rc after $rows of 273 items, message: '${err#kvarena: }'; integrity_check on the tmpfs: $integ; --resume on a copy elsewhere: exit $rc2, $cmp"
  if [ "$rc" != 0 ] && [ -n "$err" ] && [[ "$err" == *"$mnt/fill.sqlite"* || "$err" == *tmpfs/fill.sqlite* ]] &&
     [ "$integ" = ok ] && [ "$rows" -gt 0 ] && [ "$rows" -lt 273 ] && [ "$rc2" = 0 ] && [ "$cmp_rc" = 0 ]; then
    record disk-full PASS "$fig"
  else
    record disk-full FAIL "$fig"
  fi
}

# ---------------------------------------------------------------------------------------
# Live (not zombie) processes of a kvarena pid's Chromium: by profile folder, or in the
# group of the browser process.
chromium_live() {  # chromium_live KVARENA_PID [PGID]
  ps -eo pid=,pgid=,stat=,args= | awk -v pre="/tmp/kvarena-chromium-$1-" -v g="${2:--1}" \
    '$3 !~ /^Z/ && (index($0, "--user-data-dir=" pre) > 0 || $2 == g) { n++ } END { print n + 0 }'
}
case_chromium_kill() {
  local dir="$WORK/chrome" db="$WORK/chrome/chaos.sqlite" pid rc i k browser n0 left=0 dirs_left
  if [ ! -x /usr/bin/chromium ]; then record chromium-kill SKIP "no /usr/bin/chromium"; return; fi
  mkdir -p "$dir"
  # The model agent (what users run): a dead browser must not become a done row of failed steps.
  local args=(--suite "$SUITE" --model "$MODEL" --policies window --max-steps 3 -t 1 -j 1 --browser chromium
              --limit "$CHROME_LIMIT" --name chaos)
  "$KVARENA" run "${args[@]}" --out "$db" > /dev/null 2> "$dir/run.log" &
  pid=$!
  PIDS+=("$pid")
  # Kill k: once k items are written and a (new) browser runs, SIGKILL it 100-900 ms later.
  local killed=() at=()
  for k in $(seq 1 "$CHROME_KILLS"); do
    browser=""
    for i in $(seq 1 600); do
      browser=$(ps -eo pid=,ppid=,comm= | awk -v p="$pid" '$2 == p && $3 ~ /chrom/ { print $1; exit }')
      n0=$(chaospy count "$db")
      [ -n "$browser" ] && [ "${n0:-0}" -ge "$k" ] && [[ " ${killed[*]} " != *" $browser "* ]] && break
      browser=""
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$browser" ] || break
    sleep "0.$((1 + RANDOM % 9))"
    kill -0 "$browser" 2>/dev/null || continue
    at+=("$(chaospy count "$db")")
    kill -9 "$browser"
    killed+=("$browser")
    log "chromium-kill: SIGKILL to Chromium $browser of kvarena $pid with ${at[-1]} items written"
  done
  wait_for "$pid" 300
  rc=$?
  if [ "${#killed[@]}" = 0 ]; then
    record chromium-kill FAIL "no Chromium process of kvarena $pid seen to kill, run exit $rc ($(tail -n2 "$dir/run.log" | tr '\n' ' '))"
    return
  fi
  # What is left once kvarena has gone: live processes with its profile folders or in a
  # killed browser's group (zombies do not count: this machine's init may not reap them).
  local waited
  for waited in $(seq 0 50); do
    left=$(chromium_live "$pid")
    for browser in "${killed[@]}"; do left=$((left + $(chromium_live 0 "$browser"))); done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  dirs_left=$(ls -d /tmp/kvarena-chromium-"$pid"-* 2>/dev/null | wc -l)
  local st st_err total gone
  IFS=$'\t' read -r st gone st_err < <(chaospy status "$db")
  total=$(chaospy count "$db")
  "$KVARENA" run "${args[@]}" --out "$db" --resume > /dev/null 2>> "$dir/run.log"
  local rc2=$? st2
  st2="$(chaospy status "$db" | cut -f1)"
  local fig="${#killed[@]} SIGKILL(s) to Chromium (after ${at[*]} of $CHROME_LIMIT items written): run exit $rc, rows $total ($st${st_err:+; first error: $st_err}), done rows that met the dead browser (scored as failures): $gone; $left Chromium processes and $dirs_left profile folders left ($((waited * 100)) ms after kvarena exited); --resume: exit $rc2, $st2"
  if [ "$total" = "$CHROME_LIMIT" ] && [ "$gone" = 0 ] && [ "$left" = 0 ] && [ "$dirs_left" = 0 ] && [ "$rc" != 124 ] &&
     [ "$rc2" = 0 ] && [ "$st2" = "done:$CHROME_LIMIT" ]; then
    record chromium-kill PASS "$fig"
  else
    record chromium-kill FAIL "$fig"
  fi
}

# ---------------------------------------------------------------------------------------
case_env_restart() {
  local dir="$WORK/envr" db="$WORK/envr/chaos.sqlite" pid rc rc2 port i n0 down_ms
  mkdir -p "$dir"
  if ! start_env_server 0 "$dir/server.log"; then record env-restart FAIL "the env server did not start"; return; fi
  port="${ENV_URL##*:}"
  local args=("${RUN_ARGS[@]}" --limit "$ENV_LIMIT" --env-url "$ENV_URL" --env-tries 3 --env-backoff-ms 100)
  "$KVARENA" run "${args[@]}" --out "$db" > /dev/null 2> "$dir/run.log" &
  pid=$!
  PIDS+=("$pid")
  # The kill: 50-350 ms after the first row, so items are left in every mode.
  for i in $(seq 1 1200); do
    n0=$(chaospy count "$db")
    [ "${n0:-0}" -ge 1 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  sleep "$(printf '0.%03d' $((50 + RANDOM % 300)))"
  n0=$(chaospy count "$db")
  stop_pid "$ENV_PID"
  # Down for 1.5 s: longer than the client's retries (100 + 200 ms) so the items in flight
  # fail, then the same port again.
  down_ms=1500
  sleep 1.5
  if ! start_env_server "$port" "$dir/server.log"; then
    stop_pid "$pid"
    record env-restart FAIL "the env server did not start again on port $port ($(tail -n1 "$dir/server.log"))"
    return
  fi
  wait_for "$pid" 300
  rc=$?
  local total st st_err
  total=$(chaospy count "$db")
  IFS=$'\t' read -r st _ st_err < <(chaospy status "$db")
  "$KVARENA" run "${args[@]}" --out "$db" --resume > /dev/null 2>> "$dir/run.log"
  rc2=$?
  local cmp cmp_rc
  cmp="$(chaospy compare "$REF" "$db" subset 2>> "$dir/run.log")"
  cmp_rc=$?
  stop_pid "$ENV_PID"
  local planned=$((ENV_LIMIT * 2))
  local fig="server SIGKILLed after $n0 of $planned items, down ${down_ms} ms, restarted on port $port: run exit $rc, rows $total ($st${st_err:+; first error: $st_err}); --resume: exit $rc2, $cmp"
  if [ "$total" = "$planned" ] && [[ "$st" == *error:* ]] && [ "$rc" != 124 ] && [ "$rc2" = 0 ] && [ "$cmp_rc" = 0 ] &&
     [[ "$cmp" == "rows=$planned "* ]]; then
    record env-restart PASS "$fig"
  else
    record env-restart FAIL "$fig"
  fi
}

# ---------------------------------------------------------------------------------------
case_soak() {
  local dir="$WORK/soak" out
  mkdir -p "$dir"
  if ! start_env_server 0 "$dir/server.log" --threads 8; then record soak FAIL "the env server did not start"; return; fi
  out="$(chaospy soak "$ENV_URL" "$SUITE" "$SOAK_S" "$SOAK_SESSIONS" "$ENV_PID" 2> "$dir/client.log")"
  local alive=no
  kill -0 "$ENV_PID" 2>/dev/null && healthy "$ENV_URL" 5 && alive=yes
  stop_pid "$ENV_PID"
  if [ -z "$out" ]; then record soak FAIL "the client printed nothing ($(tail -n2 "$dir/client.log" | tr '\n' ' '))"; return; fi
  local steps p50 p99 errors warm endr growth secs creates aerr
  steps=$(jget "$out" steps); p50=$(jget "$out" p50_ms); p99=$(jget "$out" p99_ms)
  errors=$(jget "$out" errors); warm=$(jget "$out" rss_warm_kib); endr=$(jget "$out" rss_end_kib)
  secs=$(jget "$out" seconds); creates=$(jget "$out" creates); aerr=$(jget "$out" action_errors)
  growth=$(( (endr - warm) / 1024 ))
  local fig="$SOAK_SESSIONS sessions x ${secs}s: $steps steps ($creates sessions; $aerr action errors), p50 ${p50} ms, p99 ${p99} ms, errors $errors; RSS $((warm / 1024)) MiB after warm-up -> $((endr / 1024)) MiB (growth $growth MiB, peak $(( $(jget "$out" rss_peak_kib) / 1024 )) MiB); server alive: $alive"
  [ "$errors" != 0 ] && fig="$fig; first errors: $(jget "$out" first_errors)"
  # Bounded: growth under 64 MiB after warm-up (sessions come and go; their memory must too).
  if [ "$errors" = 0 ] && [ "$alive" = yes ] && [ "$steps" -gt 0 ] && [ "$growth" -lt 64 ]; then
    record soak PASS "$fig"
  else
    record soak FAIL "$fig"
  fi
}

# ---------------------------------------------------------------------------------------
case_creations() {
  local dir="$WORK/create" out
  mkdir -p "$dir"
  if ! start_env_server 0 "$dir/server.log" --threads 8 --max-sessions 256; then record creations FAIL "the env server did not start"; return; fi
  out="$(chaospy creations "$ENV_URL" "$SUITE" "$CREATIONS" 16 "$ENV_PID" 2> "$dir/client.log")"
  local alive=no
  kill -0 "$ENV_PID" 2>/dev/null && healthy "$ENV_URL" 5 && alive=yes
  stop_pid "$ENV_PID"
  if [ -z "$out" ]; then record creations FAIL "the client printed nothing ($(tail -n2 "$dir/client.log" | tr '\n' ' '))"; return; fi
  local codes created r0 rfull rend rdel bad churn
  codes=$(jget "$out" codes); created=$(jget "$out" created); churn=$(jget "$out" churn_codes)
  r0=$(( $(jget "$out" rss_start_kib) / 1024 )); rfull=$(( $(jget "$out" rss_full_kib) / 1024 ))
  rend=$(( $(jget "$out" rss_end_kib) / 1024 )); rdel=$(( $(jget "$out" rss_deleted_kib) / 1024 ))
  # Anything but 201, 503 and other 4xx is bad: 0 (no answer) and 5xx other than 503.
  bad=$("$PY" -c 'import json,sys; c=json.loads(sys.argv[1]); c2=json.loads(sys.argv[2]); print(sum(v for k,v in list(c.items())+list(c2.items()) if str(k).lstrip("del") not in ("201","200","503") and not (400 <= int(str(k).lstrip("del")) < 500)))' "$codes" "$churn")
  local fig="$CREATIONS creations (16 clients, $(jget "$out" fill_s)s): status $codes, $created sessions held (max 256); then $((CREATIONS / 4)) create+delete: $churn; no answer or other 5xx: $bad; RSS $r0 MiB idle -> $rfull MiB with the table full -> $rdel MiB once deleted -> $rend MiB after the churn; server alive: $alive"
  if [ "$bad" = 0 ] && [ "$alive" = yes ] && [ "$created" -le 256 ] && [ "$created" -gt 0 ] &&
     [ "$rend" -le $((rfull + 64)) ]; then
    record creations PASS "$fig"
  else
    record creations FAIL "$fig"
  fi
}

for c in kill-resume disk-full chromium-kill env-restart soak creations; do
  [ -z "$ONLY" ] || [[ ",$ONLY," == *",$c,"* ]] || continue
  "case_${c//-/_}"
done

echo
echo "kvarena chaos ($MODE mode, $(elapsed "$T_START") s, seed $SEED, $(nproc) cores):"
echo
echo "| case | result | figures |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
[ "$FAILS" = 0 ] || { echo "chaos.sh: $FAILS case(s) failed" >&2; exit 1; }
exit 0
