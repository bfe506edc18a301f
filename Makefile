# SPDX-License-Identifier: GPL-2.0
# kvmmmu build: BPF objects -> skeletons -> user-space commands, all in build/.
# Nothing here reads the build host's kernel: the CO-RE types are committed
# in bpf/kvmmmu_core.h.

OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(PREFIX)/sbin
MANDIR := $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC ?= gcc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed 's/x86_64/x86/')

ifneq ($(ARCH),x86)
$(error kvmmmu traces the x86 KVM MMU; architecture $(ARCH) is not supported)
endif

CFLAGS ?= -O2 -g
# EXTRA_CFLAGS/EXTRA_LDFLAGS add to the build without replacing its flags.
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -pthread $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
CPPFLAGS += -Isrc/lib -Isrc/core -Isrc/trace -Isrc/session -Isrc/render -Isrc/diff -Iinclude -I$(OUTPUT)/skel
# what the tracing commands link; kvmmmu-diff and the unit tests of pure logic need no libbpf
BASE_LIBS := -lm -pthread
LDLIBS += -lbpf -lelf -lz $(BASE_LIBS)
BPFCFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -Ibpf
# System include dirs after ours, as libbpf-bootstrap does, so <bpf/...> resolves.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

APPS := kvmmmu-load kvmmmu-hist kvmmmu-check kvmmmu-top kvmmmu-diff kvmmmu-exporter
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/skel/%.skel.h,$(BPF_SRCS))
# The layers, lowest first (docs/architecture.md): each links only what is below it.
layer_objs = $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(wildcard src/$(1)/*.c))
LIB_OBJS := $(call layer_objs,lib)
CORE_OBJS := $(call layer_objs,core)
TRACE_OBJS := $(call layer_objs,trace)
SESSION_OBJS := $(call layer_objs,session)
RENDER_OBJS := $(call layer_objs,render)
# a command that traces: its own objects over every layer
TRACING_OBJS := $(RENDER_OBJS) $(SESSION_OBJS) $(TRACE_OBJS) $(CORE_OBJS) $(LIB_OBJS)
app_objs = $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(wildcard src/$(1)/*.c)) \
	   $(patsubst src/%.S,$(OUTPUT)/obj/%.o,$(wildcard src/$(1)/*.S))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(wildcard tests/unit/test_*.c))
TEST_TOOLS := $(patsubst tests/tools/%.c,$(OUTPUT)/tests/tools/%,$(filter-out %.bpf.c tests/tools/bpfscenarios_%.c,$(wildcard tests/tools/*.c)))

.PHONY: all clean docs install deps test test-all test-pinned test-unit test-integration test-vm test-patches sanitize demo fuzz \
	bench format check-format
.DELETE_ON_ERROR:
.SECONDARY:

all: $(addprefix $(OUTPUT)/,$(APPS))

$(OUTPUT)/kvmmmu-load: $(call app_objs,load) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/kvmmmu-hist: $(call app_objs,hist) $(TRACING_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/kvmmmu-top: $(call app_objs,top) $(TRACING_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -lncursesw -ltinfo -o $@

# offline: CSV in, reports out; no BPF, no libbpf
$(OUTPUT)/kvmmmu-diff: $(call app_objs,diff) $(RENDER_OBJS) $(CORE_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(BASE_LIBS) -o $@

# HTTP (libmicrohttpd, with GnuTLS), the web config (libyaml), bcrypt (libcrypt), the
# basic-auth cache's SHA-256 (nettle), capabilities
EXPORTER_LIBS := -lmicrohttpd -lyaml -lcrypt -lcap -lnettle -ldeflate
$(OUTPUT)/kvmmmu-exporter: $(call app_objs,exporter) $(TRACING_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) $(EXPORTER_LIBS) -o $@

$(OUTPUT)/kvmmmu-check: $(call app_objs,check) $(TRACING_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# User-space objects depend on every skeleton: they are few and cheap.
$(OUTPUT)/obj/%.o: src/%.c $(wildcard src/*/*.h include/*.h) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/obj/%.o: src/%.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) -c $< -o $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h include/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPFCFLAGS) $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

# the faults object again, with its fsession programs (bpf/faults_session.bpf.c)
$(OUTPUT)/bpf/faults_session.bpf.o: bpf/faults.bpf.c

# the tests' own BPF objects (tests/tools/*.bpf.c)
$(OUTPUT)/bpf/%.bpf.o: tests/tools/%.bpf.c $(wildcard bpf/*.h include/*.h tests/tools/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPFCFLAGS) -Itests/tools $(CLANG_BPF_SYS_INCLUDES) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# Each layer an archive, so that a unit test links what it uses and no more:
# libbpf only where it tests BTF parsing (tests/unit/test_layers.sh checks).
$(OUTPUT)/lib%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(OUTPUT)/libkvmmmu-lib.a: $(LIB_OBJS)
$(OUTPUT)/libkvmmmu-core.a: $(CORE_OBJS)
$(OUTPUT)/libkvmmmu-trace.a: $(TRACE_OBJS)
$(OUTPUT)/libkvmmmu-render.a: $(RENDER_OBJS)
$(OUTPUT)/libkvmmmu-diff.a: $(filter-out $(OUTPUT)/obj/diff/main.o,$(call app_objs,diff))
UNIT_ARCHIVES := $(addprefix $(OUTPUT)/libkvmmmu-,diff.a render.a trace.a core.a lib.a)

$(OUTPUT)/tests/%: tests/unit/%.c $(UNIT_ARCHIVES)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $^ -Wl,--as-needed -lcmocka $(LDLIBS) -o $@

# The exporter's web config, unit-tested on its own
$(OUTPUT)/tests/test_web_config: tests/unit/test_web_config.c $(OUTPUT)/obj/exporter/web_config.o
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) -Isrc/exporter $(CFLAGS) $^ -lcmocka -lyaml -lcrypt -o $@

# bpfscenarios runs the BPF objects' programs (BPF_PROG_TEST_RUN): main() in
# bpfscenarios.c, a bpfscenarios_*.c per group of cases (no tool of their own)
$(OUTPUT)/tests/tools/bpfscenarios: $(wildcard tests/tools/bpfscenarios_*.c) tests/tools/bpfscenarios.h \
	$(OUTPUT)/skel/mmu_lock.skel.h $(OUTPUT)/skel/faults.skel.h \
	$(OUTPUT)/skel/kcell.skel.h $(OUTPUT)/obj/trace/kernel_btf.o

# prombench renders a synthetic fleet as a scrape does: the render and core layers,
# the exporter's process_* families, and its gzip (libdeflate; zlib's beside it)
$(OUTPUT)/tests/tools/prombench: CPPFLAGS += -Isrc/exporter
$(OUTPUT)/tests/tools/prombench: LDLIBS += -ldeflate
$(OUTPUT)/tests/tools/prombench: $(RENDER_OBJS) $(CORE_OBJS) $(OUTPUT)/obj/exporter/process.o

$(OUTPUT)/tests/tools/%: tests/tools/%.c $(LIB_OBJS)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(filter-out %.h,$^) $(LDLIBS) -o $@

# The distro kernels make test boots (every tests/vm/kernels/*.conf boots in
# make test-vm): two at once, one a CPU of the CI machine kind; which two and
# why, docs/testing.md ("Which kernels run when").
TEST_VM_KERNELS ?= 6.1 7.3
test: all $(UNIT_TESTS) $(TEST_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) KVMMMU_VM_KERNELS='$(TEST_VM_KERNELS)' tests/run.sh

# What CI runs: the suite at full speed, pinned to one CPU, and under sanitizers.
# One after another, never in parallel: they share the machine's KVM and BPF.
test-all:
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory test-pinned
	$(Q)$(MAKE) --no-print-directory sanitize

# The whole suite again on one CPU: timing races show up here, not on a fast machine.
# The distro-kernel guests run here too: kvmmmu in each probe mode, but not
# their longest groups (tdp-mmu and shadow, with their module reloads, were
# 197 of the 352 checks pinned; tdp-ab, qemu, patches), which the full-speed
# pass has run (the pinned guests took 547 s with them). Pinning QEMU's one TCG thread
# changes nothing those guests see but the wall time (each guest is one host
# thread either way), and the suite must stay under 30 minutes.
PINNED_VM_CHECKS ?= check,ret-pf,hist-*,dirty-log
test-pinned: all $(UNIT_TESTS) $(TEST_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) KVMMMU_VM_CHECKS='$(PINNED_VM_CHECKS)' KVMMMU_VM_KERNELS='$(TEST_VM_KERNELS)' \
		KVMMMU_GUEST_SKIP='make test ran these in the guest, whose vCPUs already take turns on one host thread as pinning makes them' \
		taskset -c 0 tests/run.sh

# Everything built with ASan and UBSan (into build-sanitize/), then the unit
# and integration tests on it: any report fails the run.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The guest passes (tests/guest.sh) under ASan would cost make test's guest
# time again; SANITIZE_GUESTS names passes to run anyway (e.g. 6.12-npt0).
SANITIZE_GUESTS ?=
SANITIZE_GUEST_SKIP ?= $(if $(SANITIZE_GUESTS),,make test ran these in the guests (ASan under TCG would cost that time again))
sanitize:
	$(Q)$(MAKE) --no-print-directory OUTPUT=build-sanitize EXTRA_CFLAGS="$(SANITIZE_FLAGS)" \
		EXTRA_LDFLAGS="$(SANITIZE_FLAGS)" all $(patsubst $(OUTPUT)/%,build-sanitize/%,$(UNIT_TESTS) $(TEST_TOOLS))
	$(Q)OUTPUT=build-sanitize KVMMMU_SKIP_VM=1 KVMMMU_GUESTS='$(SANITIZE_GUESTS)' \
		KVMMMU_GUEST_SKIP='$(SANITIZE_GUEST_SKIP)' ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run.sh

# Fuzzing with libFuzzer (clang): the CSV reader alone (fuzz_csv), and
# kvmmmu-diff's reading of a run, reader, snapshot loader and derivation
# (fuzz_diff), each for FUZZ_SECS. New inputs go to $(OUTPUT)/fuzz/corpus;
# tests/fuzz/csv is the kept corpus, replayed through both by
# unit/test_csv_corpus. Keep what a run found with
#   $(OUTPUT)/fuzz/fuzz_csv -merge=1 tests/fuzz/csv $(OUTPUT)/fuzz/corpus
FUZZ_SECS ?= 600
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CPPFLAGS := -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc/lib -Isrc/core -Isrc/diff
# what kvmmmu-diff's run_load() reaches, built with the fuzzer's instrumentation
FUZZ_DIFF_SRCS := src/diff/derive.c src/diff/stats.c src/core/snapshot_csv.c src/core/snapshot.c \
	src/lib/csv_reader.c src/lib/array.c src/lib/kvm_stats.c src/core/model.c src/core/ret_pf_table.c \
	src/core/vm_stats.c src/core/timeline.c src/core/probe_status.c src/core/regions.c \
	src/core/catalogue.c
$(OUTPUT)/fuzz/fuzz_csv: tests/fuzz/fuzz_csv.c tests/fuzz/csv_target.c src/lib/csv_reader.c src/lib/csv.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_FLAGS) $(FUZZ_CPPFLAGS) tests/fuzz/fuzz_csv.c src/lib/csv_reader.c -lm -o $@

$(OUTPUT)/fuzz/fuzz_diff: tests/fuzz/fuzz_diff.c tests/fuzz/diff_target.c $(FUZZ_DIFF_SRCS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_FLAGS) $(FUZZ_CPPFLAGS) tests/fuzz/fuzz_diff.c $(FUZZ_DIFF_SRCS) -lm -o $@

fuzz: $(OUTPUT)/fuzz/fuzz_csv $(OUTPUT)/fuzz/fuzz_diff
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus
	$(Q)$(OUTPUT)/fuzz/fuzz_diff -max_total_time=$(FUZZ_SECS) -max_len=8192 -timeout=5 \
		-print_final_stats=1 $(OUTPUT)/fuzz/corpus tests/fuzz/csv
	$(Q)$(OUTPUT)/fuzz/fuzz_csv -max_total_time=$(FUZZ_SECS) -max_len=8192 -timeout=5 \
		-print_final_stats=1 $(OUTPUT)/fuzz/corpus tests/fuzz/csv

test-unit: $(UNIT_TESTS)
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh unit

test-integration: all $(TEST_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh integration

# kernel-patches/: each target's series against Debian's source of it, the
# patched KVM modules built, then booted in the distro-kernel guests (make
# test runs all of it too, measuring each patch once a side; this measures
# 4 runs a side and compares them with kvmmmu-diff).
test-patches: all $(TEST_TOOLS)
	$(Q)scripts/kernel-patches.sh check
	$(Q)scripts/kernel-patches.sh build || [ $$? = 3 ]
	$(Q)OUTPUT=$(OUTPUT) KVMMMU_VM_CHECKS=check,patches KVMMMU_PATCH_RUNS=4 tests/run.sh vm

# Debian's distro kernels under QEMU: fentry/kprobe, NPT, tdp_mmu=Y/N (tests/vm/).
test-vm: all $(TEST_TOOLS)
	$(Q)OUTPUT=$(OUTPUT) tests/run.sh vm

# docs/csv.md's table of figures, from the catalogue (include/kvmmmu_metrics.h);
# unit/test_catalogue fails while it is not current.
docs: $(OUTPUT)/tests/test_catalogue
	$(Q)$(OUTPUT)/tests/test_catalogue --doc >$(OUTPUT)/catalogue.md
	$(Q)awk -v table=$(OUTPUT)/catalogue.md \
		'/^<!-- catalogue:/ { while ((getline l <table) > 0) print l; skip = 1; next } \
		 /^<!-- end of catalogue -->/ { skip = 0; next } !skip' docs/csv.md >docs/csv.md.new
	$(Q)mv docs/csv.md.new docs/csv.md

demo: all
	$(Q)scripts/demo.sh $(OUTPUT)

bench: all $(TEST_TOOLS)
	$(Q)scripts/bench.sh $(OUTPUT)

# Debian 12 packages for building, testing and benchmarking. Idempotent.
deps:
	$(Q)scripts/install-deps.sh

install: all
	$(call msg,INSTALL,$(DESTDIR)$(BINDIR))
	$(Q)install -d $(DESTDIR)$(BINDIR)
	$(Q)install -m 0755 $(addprefix $(OUTPUT)/,$(APPS)) $(DESTDIR)$(BINDIR)
	$(Q)install -d $(DESTDIR)$(MANDIR)/man1
	$(Q)install -m 0644 $(wildcard docs/man/*.1) $(DESTDIR)$(MANDIR)/man1
	$(Q)install -d $(DESTDIR)$(UNITDIR)
	$(Q)sed 's|@SBINDIR@|$(BINDIR)|' dist/kvmmmu-exporter.service >$(DESTDIR)$(UNITDIR)/kvmmmu-exporter.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/kvmmmu-exporter.service

FORMATTED = $(wildcard src/*/*.[ch] include/*.h bpf/*.[ch] tests/unit/*.c tests/tools/*.[ch] tests/fuzz/*.c tests/vm/*.c \
		       scripts/bench/*.c)

format:
	$(Q)clang-format -i $(FORMATTED)

check-format:
	$(Q)clang-format --dry-run --Werror $(FORMATTED)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT) build-sanitize
