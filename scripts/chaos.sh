#!/usr/bin/env bash
# Chaos harness: a local Pub/Sub server (beamagents pubsub-server) in its own process, the
# streaming pipeline on Prism with --state_dir, two effectors sharing one redis-server as
# their dedup store, and a tool that logs every effect's intent id (scripts/chaos). Effectors
# are killed with SIGKILL at random moments and restarted; halfway, the pipeline is drained
# (SIGTERM) and started again with the same --state_dir. The last line is
#   kills K, intents N, effects E, duplicates in the crash window D, lost L
# Knobs: CHAOS_KILLS (default 20), CHAOS_INTENTS (default 300), CHAOS_RATE (events per
# second, default 30), CHAOS_SEED (bash RANDOM seed), CHAOS_KEEP=1 keeps the work directory.
# It needs redis-server on PATH (Debian: apt-get install redis-server).
set -euo pipefail

KILLS=${CHAOS_KILLS:-20}
N=${CHAOS_INTENTS:-300}
RATE=${CHAOS_RATE:-30}
RANDOM=${CHAOS_SEED:-$$}
cd "$(dirname "$0")/.."
command -v redis-server >/dev/null || { echo "chaos: redis-server is not on PATH (apt-get install redis-server)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/beamagents-chaos-XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ ${CHAOS_KEEP:-} == 1 ]]; then echo "chaos: work directory $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
log() { echo "chaos: $*" >&2; }

log "building the chaos binary"
go build -o "$work/chaos" ./scripts/chaos
bin=$work/chaos

P=projects/chaos
printf '{"active":"chaos","keys":[{"id":"chaos","secret":"%s"}]}\n' "$(head -c 32 /dev/urandom | base64 -w0)" > "$work/ring.json"
export CHAOS_SCRIPT=$work/script.jsonl CHAOS_EFFECTS=$work/effects.log
"$bin" chaos-script --n "$N" --out "$CHAOS_SCRIPT"

rport=$((20000 + RANDOM % 20000))
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no > "$work/redis.log" 2>&1 &
pids+=($!)

"$bin" pubsub-server --addr 127.0.0.1:0 --ack_deadline_seconds 10 \
	--subscription $P/subscriptions/in=$P/topics/in --subscription $P/subscriptions/intents=$P/topics/intents \
	--subscription $P/subscriptions/audit-intents=$P/topics/intents --subscription $P/subscriptions/audit-results=$P/topics/in \
	--subscription $P/subscriptions/audit-finals=$P/topics/finals --subscription $P/subscriptions/audit-errors=$P/topics/errors \
	> "$work/pubsub.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$work/pubsub.log" && break; sleep 0.1; done
PUBSUB_EMULATOR_HOST=$(sed -n 's/.*listening on \([0-9.:]*\).*/\1/p' "$work/pubsub.log")
export PUBSUB_EMULATOR_HOST
log "Pub/Sub on $PUBSUB_EMULATOR_HOST, redis on 127.0.0.1:$rport, work in $work"

pipeline_pid=
runs=0
start_pipeline() {
	"$bin" run --agent chaos --input_subscription $P/subscriptions/in --intents_topic $P/topics/intents \
		--finals_topic $P/topics/finals --errors_topic $P/topics/errors --keyring "file:$work/ring.json" \
		--state_dir "$work/state" --status_interval 5s >> "$work/pipeline.log" 2>&1 &
	pipeline_pid=$!
	pids+=("$pipeline_pid")
	runs=$((runs + 1))
}
drain_pipeline() {
	# A SIGTERM before the run handles signals would kill it instead of draining it: wait for
	# its start line (one per run started so far).
	for _ in $(seq 1200); do
		(( $(grep -c "^streaming from" "$work/pipeline.log" || true) >= runs )) && break
		sleep 0.1
	done
	kill -TERM "$pipeline_pid"
	wait "$pipeline_pid" || { log "the pipeline's drain failed (see $work/pipeline.log)"; tail -20 "$work/pipeline.log" >&2; exit 1; }
}
declare -a eff
start_effector() {
	"$bin" effector --input_subscription $P/subscriptions/intents --results_topic $P/topics/in \
		--keyring "file:$work/ring.json" --verify require --dedup "redis:127.0.0.1:$rport" --agents chaos --lease 2s \
		>> "$work/effector-$1.log" 2>&1 &
	eff[$1]=$!
	pids+=("${eff[$1]}")
}

start_pipeline
start_effector 0
start_effector 1
"$bin" chaos-publish --n "$N" --topic $P/topics/in --rate "$RATE" &
publisher=$!
pids+=("$publisher")

restarts=0
for k in $(seq "$KILLS"); do
	sleep "$((RANDOM % 15 + 2))e-1"
	i=$((RANDOM % 2))
	kill -KILL "${eff[$i]}" 2>/dev/null || true
	wait "${eff[$i]}" 2>/dev/null || true
	start_effector "$i"
	if ((k == (KILLS + 1) / 2)); then
		log "kill $k: draining the pipeline and starting it again with the same --state_dir"
		drain_pipeline
		start_pipeline
		restarts=$((restarts + 1))
	fi
done
((KILLS > 0)) || { sleep 2; drain_pipeline; start_pipeline; restarts=1; }
wait "$publisher"
log "$KILLS kills, $restarts pipeline restarts; waiting for every customer's final reply"
set +e
"$bin" chaos-audit --n "$N" --kills "$KILLS" --effects "$CHAOS_EFFECTS" --wait "${CHAOS_WAIT:-5m}" \
	--intents_sub $P/subscriptions/audit-intents --results_sub $P/subscriptions/audit-results \
	--finals_sub $P/subscriptions/audit-finals --errors_sub $P/subscriptions/audit-errors > "$work/audit.txt"
status=$?
set -e
drain_pipeline
grep -h "state of" "$work/pipeline.log" | tail -1 >&2 || true
cat "$work/audit.txt"
exit $status
