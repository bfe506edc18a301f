#!/usr/bin/env bash
# needs: /dev/kvm (run in a guest where this host has none: tests/run.sh)
# KVM's binary statistics on this kernel (src/lib/kvm_stats.c): a vCPU's and
# a VM's descriptors read through KVM_GET_STATS_FD and found by name, the
# unit test's live part (build/tests/test_kvm_stats --live).
source "$(dirname "$0")/../lib.sh"

if ! why=$(need_kvm); then
	skip kvm_stats/live "$why"
	exit 0
fi
out=$(CMOCKA_MESSAGE_OUTPUT=tap "$BUILD/tests/test_kvm_stats" --live 2>&1)
rc=$?
check kvm_stats/live-vcpu-and-vm-stats "exit $rc: $(grep -v '^ok' <<<"$out" | head -5 | tr '\n' ' ')" \
	eval "[ $rc = 0 ] && grep -q '^ok 1 - live_vcpu_stats' <<<\"\$out\""
