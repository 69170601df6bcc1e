#!/usr/bin/env bash
# Issue 12's recorded HumanEval runs (embedded Qwen), kept going across sessions from one fixed commit.
#
#   benchmarks/recorded_runs.sh start       clone the fixed commit under $RUNS (once), put back the partial results
#                                           saved in this checkout, and start both runs in the background
#   benchmarks/recorded_runs.sh stop        stop both runs (SIGTERM: in-flight problems are cancelled and write no
#                                           row; `start` runs them again from scratch), e.g. around a fresh-clone CI
#                                           run or a timing benchmark. Never pause them with SIGSTOP: a sandbox job in
#                                           flight would outlive its host-side time limit while stopped and be scored
#                                           as a timeout when the process continues.
#   benchmarks/recorded_runs.sh status      how far each run is
#   benchmarks/recorded_runs.sh checkpoint  copy the results so far into this checkout (commit them yourself)
#
# The ablation does not run the full debate again: its table takes it from the main run's rows
# (benchmarks/ablation.py --table-only --full-from .../humaneval-qwen/results.jsonl).
# The runs live outside the repository (a session's machine is new each time, so only what is committed
# survives): checkpoint before a session ends. Both runs resume from their results.jsonl. Never tune on them:
# they hold hidden-test outcomes.
set -euo pipefail

COMMIT=06429d1
RUNS=${RUNS:-/work/runs}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$HERE/.venv/bin/python}
MAIN=$RUNS/he-$COMMIT
ABLATION=$RUNS/abl-$COMMIT
MAIN_OUT=benchmarks/results/humaneval-qwen
ABLATION_OUT=benchmarks/results/humaneval-qwen-ablation
SAVED=$HERE/benchmarks/results/humaneval-qwen-partial
CONFIG=benchmarks/configs/humaneval-qwen.toml

clone() {
  [[ -d $1/.git ]] && return
  git clone -q "$HERE" "$1"
  git -C "$1" checkout -q "$COMMIT"
}

restore() {  # restore <saved folder> <run folder>
  [[ -d $1 ]] || return 0
  mkdir -p "$2"
  (cd "$1" && find . -name '*.jsonl' -print0) | while IFS= read -r -d '' file; do
    [[ -e $2/$file ]] || { mkdir -p "$(dirname "$2/$file")"; cp "$1/$file" "$2/$file"; }
  done
}

main_script() {
  cat <<EOF
#!/usr/bin/env bash
set -uo pipefail
cd "$MAIN"
export PYTHONPATH="$MAIN/src" LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
date
"$PY" -m debatecode.cli.app bench humaneval --model local/qwen2.5-coder-0.5b --strategy single \\
  --config $CONFIG --jobs 2 --out $MAIN_OUT || exit \$?
"$PY" -m debatecode.cli.app bench humaneval --model local/qwen2.5-coder-0.5b \\
  --strategy single,vote,reflexion,debate --match-spend debate --vote-n 3,5,9 \\
  --config $CONFIG --jobs 2 --out $MAIN_OUT
echo "run-all exit \$?"; date
EOF
}

ablation_script() {
  cat <<EOF
#!/usr/bin/env bash
set -uo pipefail
cd "$ABLATION"
export PYTHONPATH="$ABLATION/src" LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
date
"$PY" benchmarks/ablation.py --limit 40 --out $ABLATION_OUT \\
  --only no-self-evolvement,no-critique,no-early-stop,no-refine-iterations
echo "ablation exit \$?"; date
EOF
}

pids() { pgrep -f "debatecode.cli.app bench humaneval|benchmarks/ablation.py" || true; }

case ${1:-status} in
  start)
    mkdir -p "$RUNS"
    clone "$MAIN"
    clone "$ABLATION"
    restore "$SAVED/main" "$MAIN/$MAIN_OUT"
    restore "$SAVED/ablation" "$ABLATION/$ABLATION_OUT"
    main_script >"$MAIN/run-all.sh"
    ablation_script >"$ABLATION/run-ablation.sh"
    chmod +x "$MAIN/run-all.sh" "$ABLATION/run-ablation.sh"
    if [[ -n $(pids) ]]; then echo "already running: $(pids | tr '\n' ' ')"; exit 0; fi
    (setsid nohup "$MAIN/run-all.sh" >>"$RUNS/he-$COMMIT.log" 2>&1 &)
    (setsid nohup "$ABLATION/run-ablation.sh" >>"$RUNS/abl-$COMMIT.log" 2>&1 &)
    echo "started; logs: $RUNS/he-$COMMIT.log, $RUNS/abl-$COMMIT.log"
    ;;
  stop)
    groups=$(for p in $(pids); do ps -o pgid= -p "$p"; done | tr -d ' ' | sort -u)
    [[ -z $groups ]] && { echo "not running"; exit 0; }
    for g in $groups; do kill -TERM -- "-$g" 2>/dev/null || true; done
    for _ in $(seq 120); do [[ -z $(pids) ]] && break; sleep 1; done
    if [[ -n $(pids) ]]; then echo "still running after 120 s: $(pids | tr '\n' ' ')" >&2; exit 1; fi
    echo "stopped; \`$0 start\` continues both runs"
    ;;
  pause|resume)
    echo "$1 is gone: SIGSTOP makes in-flight sandbox jobs time out on the host's clock; use stop, then start" >&2
    exit 2
    ;;
  status)
    for folder in "$MAIN/$MAIN_OUT" "$ABLATION/$ABLATION_OUT"/*; do
      [[ -f $folder/results.jsonl ]] || continue
      "$PY" - "$folder/results.jsonl" <<'EOF'
import collections, json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
done = collections.Counter(row["strategy"] for row in rows)
print(sys.argv[1], "problems done:", dict(done))
EOF
    done
    ;;
  checkpoint)
    for pair in "$MAIN/$MAIN_OUT:main" "$ABLATION/$ABLATION_OUT:ablation"; do
      source=${pair%:*}
      [[ -d $source ]] || continue
      (cd "$source" && find . -name '*.jsonl' -print0) | while IFS= read -r -d '' file; do
        mkdir -p "$(dirname "$SAVED/${pair##*:}/$file")"
        cp "$source/$file" "$SAVED/${pair##*:}/$file"
      done
    done
    echo "copied into $SAVED; commit it"
    ;;
  *) echo "usage: $0 start|stop|status|checkpoint" >&2; exit 2 ;;
esac
