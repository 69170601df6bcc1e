#!/usr/bin/env bash
# Issue 32's recorded HumanEval runs (embedded Qwen2.5-Coder-0.5B): single, vote@N, Reflexion and the debate at
# matched spend, from one fixed commit, in a clone of its own, resumable across sessions. RUN names the run
# (default v3): config benchmarks/configs/humaneval-qwen-$RUN.toml, rows in benchmarks/results/humaneval-qwen-$RUN/.
#
#   RUN=v2 benchmarks/humaneval_recorded.sh status   the stopped v2 run (45 design-set debates; see its partial folder)
#
#   benchmarks/humaneval_recorded.sh start [COMMIT]   clone COMMIT (default: the one recorded in $RUNS/$RUN-commit, else HEAD)
#                                               under $RUNS once, put back rows saved in this checkout, and start the run
#                                               in the background (nohup). Rows already in results.jsonl are kept, so a
#                                               stopped run continues where it stopped.
#   benchmarks/humaneval_recorded.sh stop             SIGTERM the run (problems in flight write no row and run again later).
#                                               Never SIGSTOP it: a sandbox job in flight would be scored a timeout.
#   benchmarks/humaneval_recorded.sh status           rows so far per strategy, vote samples, the log's tail
#   benchmarks/humaneval_recorded.sh checkpoint       copy the rows so far into benchmarks/results/humaneval-qwen-$RUN-partial/
#                                               of this checkout (commit them yourself): a new machine restarts from them
#
# The run's wall time is the sum of the intervals in $RUNS/$RUN-wall.log (one line per start and per stop), so a run
# spread over several sessions still reports how long it computed. Never tune on its rows: they hold hidden verdicts.
set -euo pipefail

RUNS=${RUNS:-/work/runs}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$HERE/.venv/bin/python}
RUN=${RUN:-v3}
OUT=benchmarks/results/humaneval-qwen-$RUN
SAVED=$HERE/benchmarks/results/humaneval-qwen-$RUN-partial
CONFIG=benchmarks/configs/humaneval-qwen-$RUN.toml
mkdir -p "$RUNS"

commit() {
  if [[ -n ${1:-} ]]; then echo "$1" >"$RUNS/$RUN-commit"; fi
  [[ -s $RUNS/$RUN-commit || ! -s $SAVED/commit ]] || cp "$SAVED/commit" "$RUNS/$RUN-commit"  # a new machine: the saved rows' commit
  [[ -s $RUNS/$RUN-commit ]] || git -C "$HERE" rev-parse --short HEAD >"$RUNS/$RUN-commit"
  cat "$RUNS/$RUN-commit"
}

running() {  # the run's process group still has a member
  [[ -s $RUNS/$RUN.pid ]] && pgrep -g "$(cat "$RUNS/$RUN.pid")" >/dev/null
}

case ${1:-status} in
start)
  C=$(commit "${2:-}")
  DIR=$RUNS/$RUN-$C
  if [[ ! -d $DIR/.git ]]; then
    git clone -q "$HERE" "$DIR"
    git -C "$DIR" checkout -q "$C"
  fi
  if [[ -d $SAVED ]]; then
    mkdir -p "$DIR/$OUT"
    (cd "$SAVED" && find . -name '*.jsonl' -print0) | while IFS= read -r -d '' f; do
      [[ -e $DIR/$OUT/$f ]] || { mkdir -p "$(dirname "$DIR/$OUT/$f")"; cp "$SAVED/$f" "$DIR/$OUT/$f"; }
    done
  fi
  if running; then echo "already running (process group $(cat "$RUNS/$RUN.pid"))"; exit 0; fi
  # A new machine: the wall time computed so far comes back with the saved rows.
  [[ -s $RUNS/$RUN-wall.log || ! -s $SAVED/wall.log ]] || cp "$SAVED/wall.log" "$RUNS/$RUN-wall.log"
  cat >"$RUNS/$RUN-run.sh" <<SCRIPT
#!/usr/bin/env bash
set -uo pipefail
cd "$DIR"
echo \$\$ >"$RUNS/$RUN.pid"
export PYTHONPATH="$DIR/src" LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
echo "start \$(date +%s) \$(date -u +%FT%TZ)" >>"$RUNS/$RUN-wall.log"
trap 'echo "stop \$(date +%s) \$(date -u +%FT%TZ)" >>"$RUNS/$RUN-wall.log"' EXIT
"$PY" -m debatecode.cli.app bench humaneval --model local/qwen2.5-coder-0.5b \\
  --strategy single,vote,reflexion,debate --match-spend debate --vote-n 5,10 \\
  --config $CONFIG --jobs 2 --out $OUT
echo "run-all exit \$?"
SCRIPT
  chmod +x "$RUNS/$RUN-run.sh"
  nohup setsid "$RUNS/$RUN-run.sh" >>"$RUNS/$RUN.log" 2>&1 &
  echo "started $RUN from $C in $DIR (log: $RUNS/$RUN.log)"
  ;;
stop)
  # The run is a process group of its own (setsid): the wrapper, the bench's Python and its workers all get SIGTERM,
  # the wrapper's EXIT trap writes the stop line.
  if running; then
    kill -TERM -- "-$(cat "$RUNS/$RUN.pid")"
    for _ in $(seq 60); do running || break; sleep 1; done
    echo "stopped"
  else
    echo "not running"
  fi
  ;;
status)
  C=$(commit)
  DIR=$RUNS/$RUN-$C/$OUT
  for s in single vote reflexion debate; do
    printf '%-10s %s rows\n' "$s" "$(grep -c "\"strategy\": \"$s\"" "$DIR/results.jsonl" 2>/dev/null || true)"
  done
  printf 'vote samples: %s\n' "$( (cat "$DIR/vote-samples.jsonl" 2>/dev/null || true) | wc -l)"
  if running; then echo "running (process group $(cat "$RUNS/$RUN.pid"))"; else echo "not running"; fi
  awk '$1=="start"{s=$2} $1=="stop"&&s{t+=$2-s; s=0} END{if(s) t+=systime()-s; printf "computed: %.2f h\n", t/3600}' "$RUNS/$RUN-wall.log" 2>/dev/null || true
  tail -n 3 "$RUNS/$RUN.log" 2>/dev/null || true
  ;;
checkpoint)
  C=$(commit)
  mkdir -p "$SAVED"
  (cd "$RUNS/$RUN-$C/$OUT" && find . -name '*.jsonl' -not -path './runs/*' -print0) | while IFS= read -r -d '' f; do
    mkdir -p "$(dirname "$SAVED/$f")"; cp "$RUNS/$RUN-$C/$OUT/$f" "$SAVED/$f"
  done
  cp "$RUNS/$RUN-wall.log" "$SAVED/wall.log" 2>/dev/null || true
  echo "$C" >"$SAVED/commit"
  echo "saved to $SAVED"
  ;;
*) echo "usage: $0 start [COMMIT]|stop|status|checkpoint" >&2; exit 2 ;;
esac
