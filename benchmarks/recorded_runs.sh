#!/usr/bin/env bash
# Issue 12's recorded HumanEval runs (embedded Qwen), kept going across sessions from one fixed commit.
#
# FINISHED on 2026-11-28: the results are in benchmarks/results/humaneval-qwen/ (its README) and
# benchmarks/results/humaneval-qwen-ablation/. The script stays as the record of how they were run. Its saved rows
# (benchmarks/results/humaneval-qwen-partial/) are gone from the tree (git history: commit 844d3eb), so `start`
# refuses unless SAVED names such a folder; repeating the run from scratch is command 2 of that README.
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
#   benchmarks/recorded_runs.sh helper [debate|vote|reflexion]
#                                           once the ablation has finished and a core is free: a second stream for
#                                           one of the main run's strategies, in a clone of its own. In the stage main
#                                           is in, it takes the back half of the problems neither has done; in a stage
#                                           main has not reached, all of them. Its list is kept in this checkout
#                                           (helper-problems.txt), so `start` restarts it.
#   benchmarks/recorded_runs.sh helper-take vote-to:N|reflexion-at:K PROBLEMS
#                                           once every strategy has answered every problem and main is drawing
#                                           samples or matching spend: give the helper part of that work on
#                                           PROBLEMS (e.g. 63-124). vote-to:N draws vote samples up to N;
#                                           reflexion-at:K runs Reflexion capped at K attempts (the cap main's
#                                           search will run: bench/_spend.py). It first copies
#                                           main's finished rows into the helper's folder, so the helper skips
#                                           every answer main already has.
#   benchmarks/recorded_runs.sh helper-stop stop the helper (its finished rows stay)
#   benchmarks/recorded_runs.sh merge       stop the main run, append the helper's finished rows, vote samples and
#                                           Reflexion runs at other caps that main lacks (benchmarks/merge_run_rows.py: never a duplicate, and nothing
#                                           if the two differ on a shared one), and start main again: it skips them
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
HELPER=$RUNS/he2-$COMMIT
ABLATION=$RUNS/abl-$COMMIT
MAIN_OUT=benchmarks/results/humaneval-qwen
ABLATION_OUT=benchmarks/results/humaneval-qwen-ablation
SAVED=${SAVED:-$HERE/benchmarks/results/humaneval-qwen-partial}
HELPER_PROBLEMS=$SAVED/helper-problems.txt
CONFIG=benchmarks/configs/humaneval-qwen.toml
ABLATION_RUNS=(no-self-evolvement no-critique no-early-stop no-refine-iterations)

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
  --only $(IFS=,; echo "${ABLATION_RUNS[*]}")
echo "ablation exit \$?"; date
EOF
}

pids() { pgrep -f "debatecode.cli.app bench humaneval|benchmarks/ablation.py" || true; }

pids_in() {  # pids_in <run folder>: the run's processes (their working folder is the run's clone)
  local p
  for p in $(pids); do
    if [[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$1" ]]; then echo "$p"; fi
  done
  return 0
}

stop_groups() {  # stop_groups <pid>...: SIGTERM to their process groups, then wait for them to end
  local groups g p left
  groups=$(for p in "$@"; do ps -o pgid= -p "$p"; done | tr -d ' ' | sort -u)
  [[ -z $groups ]] && return 0
  for g in $groups; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for _ in $(seq 120); do
    left=""
    for p in "$@"; do if kill -0 "$p" 2>/dev/null; then left="$left $p"; fi; done
    [[ -z $left ]] && return 0
    sleep 1
  done
  echo "still running after 120 s:$left" >&2
  return 1
}

helper_script() {  # the helper's command: line 1 of $HELPER_PROBLEMS is its work, line 2 the problems
  local work strategy extra="" config=$CONFIG
  work=$(sed -n 1p "$HELPER_PROBLEMS")
  case $work in
    vote) strategy=vote; extra=" --vote-n 3,5,9" ;;
    vote-to:*) strategy=vote; extra=" --vote-n 3,5,9,${work#vote-to:}" ;;
    reflexion-at:*)
      # The matching search starts at the config's cap and may not go past --max-reflexion-attempts: with both
      # at K it runs Reflexion capped at K on the problems whose recorded runs do not answer for K. The
      # helper's cap stays in its own clone; the sessions it runs are configured as main's would be.
      config=benchmarks/configs/humaneval-qwen-reflexion-at.toml
      { cat "$HELPER/$CONFIG"; echo "max_attempts = ${work#reflexion-at:}"; } >"$HELPER/$config"
      strategy=reflexion,debate
      extra=" --match-spend debate --max-reflexion-attempts ${work#reflexion-at:}"
      ;;
    *) strategy=$work ;;
  esac
  cat <<EOF
#!/usr/bin/env bash
set -uo pipefail
cd "$HELPER"
export PYTHONPATH="$HELPER/src" LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1
date
"$PY" -m debatecode.cli.app bench humaneval --model local/qwen2.5-coder-0.5b --strategy $strategy$extra \\
  --problems $(sed -n 2p "$HELPER_PROBLEMS") --config $config --jobs 2 --out $MAIN_OUT
echo "helper exit \$?"; date
EOF
}

ablation_done() {  # every ablated configuration has a row for each of the 40 problems
  local name file
  for name in "${ABLATION_RUNS[@]}"; do
    file=$ABLATION/$ABLATION_OUT/$name/results.jsonl
    [[ -f $file && $(wc -l <"$file") -ge 40 ]] || return 1
  done
}

launch_main() { (setsid nohup "$MAIN/run-all.sh" >>"$RUNS/he-$COMMIT.log" 2>&1 &); }

start_helper() {
  [[ -f $HELPER_PROBLEMS ]] || return 0
  [[ -n $(pids_in "$HELPER") ]] && return 0
  clone "$HELPER"
  restore "$SAVED/helper" "$HELPER/$MAIN_OUT"
  helper_script >"$HELPER/run-helper.sh"
  chmod +x "$HELPER/run-helper.sh"
  (setsid nohup "$HELPER/run-helper.sh" >>"$RUNS/he2-$COMMIT.log" 2>&1 &)
  echo "helper started ($(sed -n 1p "$HELPER_PROBLEMS") from HumanEval/$(sed -n 2p "$HELPER_PROBLEMS" | cut -d, -f1)); log: $RUNS/he2-$COMMIT.log"
}

case ${1:-status} in
  start)
    [[ -d $SAVED ]] || { echo "the recorded runs are finished (benchmarks/results/humaneval-qwen/); no saved rows at $SAVED" >&2; exit 2; }
    mkdir -p "$RUNS"
    clone "$MAIN"
    clone "$ABLATION"
    restore "$SAVED/main" "$MAIN/$MAIN_OUT"
    restore "$SAVED/ablation" "$ABLATION/$ABLATION_OUT"
    # A run's script is rewritten only while it is not running: bash reads a script as it goes.
    if [[ -z $(pids_in "$MAIN") ]]; then
      main_script >"$MAIN/run-all.sh"
      chmod +x "$MAIN/run-all.sh"
      launch_main
      echo "main started; log: $RUNS/he-$COMMIT.log"
    fi
    if [[ -z $(pids_in "$ABLATION") ]] && ! ablation_done; then
      ablation_script >"$ABLATION/run-ablation.sh"
      chmod +x "$ABLATION/run-ablation.sh"
      (setsid nohup "$ABLATION/run-ablation.sh" >>"$RUNS/abl-$COMMIT.log" 2>&1 &)
      echo "ablation started; log: $RUNS/abl-$COMMIT.log"
    fi
    start_helper
    ;;
  helper)
    stage=${2:-debate}
    case $stage in debate|vote|reflexion) ;; *) echo "helper takes debate, vote or reflexion, not $stage" >&2; exit 2 ;; esac
    if [[ -n $(pids_in "$ABLATION") ]]; then
      echo "the ablation is still running and holds a core: start the helper once it has finished" >&2
      exit 2
    fi
    if [[ -n $(pids_in "$HELPER") ]]; then
      echo "the helper is already running ($(sed -n 1p "$HELPER_PROBLEMS")); \`$0 helper-stop\` first" >&2
      exit 2
    fi
    [[ -n $(pids_in "$MAIN") ]] || { echo "the main run is not running: \`$0 start\` first" >&2; exit 2; }
    "$PY" - "$MAIN/$MAIN_OUT/results.jsonl" "$HELPER/$MAIN_OUT/results.jsonl" "$HELPER_PROBLEMS" "$stage" <<'EOF' || exit 2
import json, os, sys

main_rows, helper_rows, target, stage = sys.argv[1:]


def done(path):
    if not os.path.exists(path):
        return set()
    return {
        json.loads(line)["task_id"]
        for line in open(path).read().split("\n")[:-1]
        if line.strip() and json.loads(line)["strategy"] == stage
    }


main_done, helper_done = done(main_rows), done(helper_rows)
left = [n for n in range(164) if f"HumanEval/{n}" not in main_done | helper_done]
# A stage main is in: the back half of what is left, so the two meet in the middle. One it has not reached yet
# (vote, reflexion while main debates): all of it; merge it before main gets there.
take = left[len(left) // 2 :] if main_done else left
if not take:
    sys.exit(f"no {stage} problems are left for a helper")
with open(target, "w") as out:
    out.write(f"{stage}\n{','.join(map(str, take))}\n")
print(f"the helper takes {len(take)} of the {len(left)} {stage} problems neither has done: {take[0]}..{take[-1]}")
EOF
    start_helper
    ;;
  helper-take)
    work=${2:-}
    problems=${3:-}
    [[ $work =~ ^(vote-to|reflexion-at):[0-9]+$ && $problems =~ ^[0-9]+-[0-9]+$ ]] || {
      echo "usage: $0 helper-take vote-to:N|reflexion-at:K FIRST-LAST (problem numbers)" >&2; exit 2; }
    if [[ -n $(pids_in "$HELPER") ]]; then
      echo "the helper is already running ($(sed -n 1p "$HELPER_PROBLEMS")); \`$0 helper-stop\` first" >&2
      exit 2
    fi
    clone "$HELPER"
    mkdir -p "$HELPER/$MAIN_OUT"
    # main's finished rows (it may keep running: a line it is still writing is left out)
    "$PY" "$HERE/benchmarks/merge_run_rows.py" "$MAIN/$MAIN_OUT" "$HELPER/$MAIN_OUT" || exit 2
    printf '%s\n%s\n' "$work" "$(seq -s, "${problems%-*}" "${problems#*-}")" >"$HELPER_PROBLEMS"
    echo "the helper takes $work on HumanEval/$problems"
    start_helper
    ;;
  helper-stop)
    helper_pids=$(pids_in "$HELPER")
    [[ -z $helper_pids ]] && { echo "the helper is not running"; exit 0; }
    # shellcheck disable=SC2086
    stop_groups $helper_pids || exit 1
    echo "helper stopped; its finished rows stay for \`$0 merge\`"
    ;;
  merge)
    [[ -f $HELPER/$MAIN_OUT/results.jsonl ]] || { echo "the helper has no results yet" >&2; exit 2; }
    main_pids=$(pids_in "$MAIN")
    # shellcheck disable=SC2086
    if [[ -n $main_pids ]]; then stop_groups $main_pids || exit 1; fi
    merged=0
    "$PY" "$HERE/benchmarks/merge_run_rows.py" "$HELPER/$MAIN_OUT" "$MAIN/$MAIN_OUT" || merged=$?
    launch_main
    echo "main started again; it skips what was merged"
    exit $merged
    ;;
  stop)
    running=$(for run in "$MAIN" "$ABLATION" "$HELPER"; do pids_in "$run"; done)
    [[ -z $running ]] && { echo "not running"; exit 0; }
    # shellcheck disable=SC2086
    stop_groups $running || exit 1
    echo "stopped; \`$0 start\` continues every run"
    ;;
  pause|resume)
    echo "$1 is gone: SIGSTOP makes in-flight sandbox jobs time out on the host's clock; use stop, then start" >&2
    exit 2
    ;;
  status)
    for folder in "$MAIN/$MAIN_OUT" "$HELPER/$MAIN_OUT" "$ABLATION/$ABLATION_OUT"/*; do
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
    for pair in "$MAIN/$MAIN_OUT:main" "$HELPER/$MAIN_OUT:helper" "$ABLATION/$ABLATION_OUT:ablation"; do
      source=${pair%:*}
      [[ -d $source ]] || continue
      (cd "$source" && find . -name '*.jsonl' -print0) | while IFS= read -r -d '' file; do
        mkdir -p "$(dirname "$SAVED/${pair##*:}/$file")"
        cp "$source/$file" "$SAVED/${pair##*:}/$file"
      done
    done
    echo "copied into $SAVED; commit it"
    ;;
  *)
    echo "usage: $0 start|stop|status|checkpoint|helper [debate|vote|reflexion]|helper-take WORK PROBLEMS|helper-stop|merge" >&2
    exit 2
    ;;
esac
