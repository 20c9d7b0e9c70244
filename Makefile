# sluice: connection-level overload protection with XDP + sock_ops.
#
#   make            build the BPF object, skeleton, sluiced, sluicectl, lab tools, tests
#   make test       run every test suite (root; installs missing Debian packages)
#   make demo       run the lab demo on configs/default.yaml (root)
#   make bench      run the benchmarks
#   V=1             show full commands

MAKEFLAGS  += --no-builtin-rules
BUILD      ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH       := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH  := $(shell $(CC) -dumpmachine 2>/dev/null)

CFLAGS     ?= -O2 -g
CFLAGS     += -std=gnu11 -Wall -Wextra -Werror -Iinclude -Iuser -I$(BUILD) -D_GNU_SOURCE
LDLIBS_BPF := -lbpf -lelf -lz
LDLIBS     := -lyaml -lpcre2-8 -lm -lpthread

BPF_CFLAGS := -O2 -g -Wall -Werror -fno-strict-aliasing -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
              -I/usr/include/$(MULTIARCH) -Iinclude -Ibpf

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Pure engines: no BPF, no I/O beyond reading a config file.  Unit-tested.
CORE_SRCS  := user/diag.c user/yaml_doc.c user/config.c user/config_net.c user/config_flowschema.c user/config_labels.c user/config_policy.c user/concurrency.c user/labels.c user/shuffle.c \
              user/level_slots.c user/json_out.c user/cgroup_path.c user/fmt.c user/plan.c user/hostport.c user/clock.c user/read_file.c
CORE_SRCS  += user/classifier.c user/class_compiler.c user/flowhash.c user/pending.c
CORE_SRCS  += user/queueset.c
CORE_SRCS  += user/borrowing.c
CORE_SRCS  += user/aimd.c
CORE_SRCS  += user/loadsched.c
# Adapters: libbpf, pinned maps, attach/detach.
ADPT_SRCS  := user/log.c user/request_server.c user/pinned_maps.c user/loader.c user/apply.c user/expiry.c user/control.c user/admission.c user/policy_rt.c user/metrics.c
CORE_OBJS  := $(CORE_SRCS:user/%.c=$(BUILD)/%.o)
ADPT_OBJS  := $(ADPT_SRCS:user/%.c=$(BUILD)/%.o)

BPF_OBJ    := bpf/sluice.bpf.o
PASS_OBJ   := bpf/xdp_pass.bpf.o
SKEL       := $(BUILD)/sluice.skel.h
BPF_HDRS   := $(wildcard bpf/*.h) include/sluice_abi.h

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/%,$(wildcard tests/unit/test_*.c))
PKT_TEST   := $(BUILD)/test_packets $(BUILD)/test_classify
LAB_BINS   := $(BUILD)/lab_service $(BUILD)/lab_load $(BUILD)/lab_peer
BINS       := $(BUILD)/sluiced $(BUILD)/sluicectl

.PHONY: all deps test demo bench fuzz clean
.DELETE_ON_ERROR:
.SECONDARY:

BENCH_BINS := $(BUILD)/bench_xdp $(BUILD)/bench_engines
BENCH_OBJ  := bpf/bench_baseline.bpf.o

all: $(BPF_OBJ) $(PASS_OBJ) $(BENCH_OBJ) $(BINS) $(LAB_BINS) $(UNIT_TESTS) $(PKT_TEST) $(BENCH_BINS)

deps:
	$(Q)scripts/install-deps.sh

$(BUILD):
	$(Q)mkdir -p $@

# BPF: compile, then let bpftool link and strip (-g kept in BTF only).
bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $(BUILD)/$*.bpf.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $(BUILD)/$*.bpf.tmp.o

$(SKEL): $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sluice > $@

$(BUILD)/%.o: user/%.c $(wildcard user/*.h) include/sluice_abi.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/loader.o $(BUILD)/expiry.o: $(SKEL)

$(BUILD)/libsluice_core.a: $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/libsluice_adapt.a: $(ADPT_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/sluiced: $(BUILD)/sluiced.o $(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_BPF) $(LDLIBS)

$(BUILD)/sluicectl: $(patsubst user/%.c,$(BUILD)/%.o,$(wildcard user/ctl_*.c)) $(BUILD)/sluicectl.o \
                    $(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_BPF) $(LDLIBS) -ljansson

$(BUILD)/lab_%: tests/lab/lab_%.c tests/lab/lab_cli.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ -lpthread -lm

$(BUILD)/test_%: tests/unit/test_%.c $(wildcard tests/unit/*.h) $(BUILD)/libsluice_core.a
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(filter-out %.h,$^) -o $@ $(LDLIBS) -lcmocka -ljansson

# The request server is an adapter (sockets); its test needs only it.
$(BUILD)/test_request_server: tests/unit/test_request_server.c $(BUILD)/request_server.o $(BUILD)/libsluice_core.a
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lcmocka

$(BUILD)/test_control: tests/unit/test_control.c $(BUILD)/control.o
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ -lcmocka

# policy_rt is an adapter (it writes the gate maps when it has a data path);
# its unit test runs it without one, so it links the adapters and libbpf.
$(BUILD)/test_policy_rt: tests/unit/test_policy_rt.c $(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a | $(SKEL)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka -ljansson

$(BUILD)/test_packets $(BUILD)/test_classify: $(BUILD)/test_%: tests/packet/test_%.c tests/packet/frames.h \
		$(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a | $(SKEL)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/packet $< $(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a \
	      -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka

$(BUILD)/bench_%: tests/bench/bench_%.c tests/packet/frames.h \
		$(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a | $(SKEL)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/packet $< $(BUILD)/libsluice_adapt.a $(BUILD)/libsluice_core.a \
	      -o $@ $(LDLIBS_BPF) $(LDLIBS)

# Every suite needs root and BPF; the runner fails loudly without them.
test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run-all.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench:
	$(Q)scripts/install-deps.sh --bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench.sh

# libFuzzer + ASan/UBSan on the configuration loader, bounded in time.
# New inputs go to build/fuzz-corpus; tests/fuzz/corpus holds the seeds.
FUZZ_SECONDS ?= 60
FUZZ_SRCS  := $(CORE_SRCS)

$(BUILD)/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_SRCS) $(wildcard user/*.h) | $(BUILD)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	      -D_GNU_SOURCE -Iinclude -Iuser $< $(FUZZ_SRCS) -o $@ -lyaml -lpcre2-8 -lm

fuzz: deps $(BUILD)/fuzz_config
	$(Q)mkdir -p $(BUILD)/fuzz-corpus
	$(Q)$(BUILD)/fuzz_config -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	      -dict=tests/fuzz/config.dict $(BUILD)/fuzz-corpus tests/fuzz/corpus

clean:
	$(Q)rm -rf $(BUILD) bpf/*.bpf.o
