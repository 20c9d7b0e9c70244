# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# sluice: connection-level overload protection with XDP + sock_ops.
#
#   make            build the BPF object, skeleton, sluiced, sluicectl, lab tools, tests
#   make test       run every test suite (root; installs missing Debian packages),
#                   the kernel matrix included (make test-kernels: it alone)
#   make check      the pure layers' unit tests only (any user, installs nothing)
#   make demo       run the lab demo on configs/demo.yaml (root)
#   make bench      run the benchmarks
#   V=1             show full commands
#
# user/ is one folder per layer (docs/ARCHITECTURE.md, folder map):
# lib -> config -> engine -> dataplane -> daemon / ctl.  Each folder is built
# by wildcard into the same path under build/, one archive per layer; -MMD
# records each object's real header dependencies.

MAKEFLAGS  += --no-builtin-rules
BUILD      ?= build

# SANITIZE=1: every userspace program and test built with ASan + UBSan
# (any report fails the run), in a tree of its own so the two never mix.
ifeq ($(SANITIZE),1)
BUILD      := build-san
SAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
ARCH       := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH  := $(shell $(CC) -dumpmachine 2>/dev/null)

# CFLAGS, CPPFLAGS and LDFLAGS are yours (make CFLAGS='-O0 -g'; a Debian
# build passes dpkg-buildflags'); what the build needs stays in SL_*.
# WERROR= turns warnings back into warnings (a newer compiler's new ones
# must not stop a distribution's build).  The hardening flags are on by
# default (fortified libc calls, stack protector, a read-only GOT bound at
# start), off under SANITIZE=1, whose instrumentation does their job.
CFLAGS     ?= -O2 -g
WERROR     ?= -Werror
ifneq ($(SANITIZE),1)
# glibc's fortified calls need an optimised build (CFLAGS='-O0' goes without)
HARDEN_CPPFLAGS := $(if $(filter -O1 -O2 -O3 -Os -Og,$(CFLAGS)),-D_FORTIFY_SOURCE=2)
HARDEN_CFLAGS   := -fstack-protector-strong -fstack-clash-protection -Wformat -Wformat-security
HARDEN_LDFLAGS  := -Wl,-z,relro -Wl,-z,now
endif
SL_CFLAGS  := -std=gnu11 -Wall -Wextra $(WERROR) -Iinclude -Iuser -I$(BUILD) -D_GNU_SOURCE -MMD -MP \
	      $(HARDEN_CPPFLAGS) $(HARDEN_CFLAGS) $(SAN_FLAGS)
ALL_CFLAGS  = $(SL_CFLAGS) $(CPPFLAGS) $(CFLAGS)
SL_LDFLAGS := $(HARDEN_LDFLAGS)
LINK_FLAGS  = $(SL_LDFLAGS) $(LDFLAGS)
LDLIBS_BPF := -lbpf -lelf -lz
LDLIBS     := -lyaml -lpcre2-8 -lm -lpthread

BPF_CFLAGS := -O2 -g -Wall $(WERROR) -fno-strict-aliasing -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
              -I/usr/include/$(MULTIARCH) -Iinclude -Ibpf

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

LAYERS     := lib config engine dataplane daemon ctl
MAINS      := user/daemon/sluiced.c user/ctl/sluicectl.c
obj_of      = $(patsubst user/%.c,$(BUILD)/%.o,$(1))
layer_srcs  = $(filter-out $(MAINS),$(wildcard user/$(1)/*.c))
layer_lib   = $(BUILD)/lib$(1).a
USER_OBJS  := $(call obj_of,$(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c)))

# What each link needs, top layer first (static archives resolve in order).
CORE_LIBS  := $(call layer_lib,engine) $(call layer_lib,config) $(call layer_lib,lib)
DP_LIBS    := $(call layer_lib,dataplane) $(CORE_LIBS)

BPF_OBJ    := bpf/sluice.bpf.o
SKEL       := $(BUILD)/sluice.skel.h
BPF_HDRS   := $(wildcard bpf/*.h) include/sluice_abi.h $(wildcard include/*.h)
BPF_HDR_CHECKS := $(patsubst bpf/%.h,$(BUILD)/bpf-headers/%.ok,$(wildcard bpf/*.h))
# Test-only BPF objects: a one-line pass program (the veth peer, "a foreign
# program"), the benchmark baselines, and the empty hooks of bench_cost.sh.
TEST_BPF   := $(BUILD)/tests/xdp_pass.bpf.o $(BUILD)/tests/xdp_count.bpf.o $(BUILD)/tests/xdp_root.bpf.o $(BUILD)/tests/bench_baseline.bpf.o $(BUILD)/tests/hooks_empty.bpf.o

UNIT_SRCS  := $(wildcard tests/unit/*/test_*.c)
UNIT_TESTS := $(patsubst %.c,$(BUILD)/%,$(UNIT_SRCS))
PKT_TESTS  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/packet/test_*.c))
LAB_BINS   := $(BUILD)/lab_service $(BUILD)/lab_load $(BUILD)/lab_peer $(BUILD)/lab_syn $(BUILD)/lab_notify \
              $(BUILD)/lab_yaml2json $(BUILD)/lab_ps $(BUILD)/lab_conns
BENCH_BINS := $(BUILD)/bench_xdp $(BUILD)/bench_engines $(BUILD)/bench_classify $(BUILD)/bench_walk
BINS       := $(BUILD)/sluiced $(BUILD)/sluicectl
# The kernel matrix's loader (each program of the object alone), and the
# object with the old verifiers' bounds left out, which the matrix must
# see refused (tests/kernels/).
KERNEL_TOOLS := $(BUILD)/tests/kernels/progs_load $(BUILD)/tests/kernels/sluice_unbounded.bpf.o

# Sanitizer reports are failures: abort on the first, leaks included.
# The sanitized run looks for memory errors, not for rare classification
# mismatches: the differential test runs 20,000 tuples a configuration
# there (50,000 in the real build).
SAN_ENV    := ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
              SLUICE_DIFF_TUPLES=20000

.PHONY: all programs deps kernels test test-kernels test-fast test-repeat check test-sanitized demo bench fuzz fuzz-replay clean FORCE install uninstall man
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BPF_OBJ) $(BPF_HDR_CHECKS) $(TEST_BPF) $(BINS) $(LAB_BINS) $(UNIT_TESTS) $(PKT_TESTS) $(BENCH_BINS) $(KERNEL_TOOLS)

# Only what ships (the Debian package builds this, not the lab and tests).
programs: $(BINS)

deps:
	$(Q)scripts/install-deps.sh

# Every BPF header compiles when included first, on its own: each includes
# what it uses, so the include graph of bpf/ is one a reader can follow
# (scripts/check_includes.sh: and has no cycle).
$(BUILD)/bpf-headers/%.ok: bpf/%.h $(BPF_HDRS)
	@mkdir -p $(@D)
	$(call msg,HDR,$<)
	$(Q)printf '#include "%s"\n' $*.h | $(CLANG) $(BPF_CFLAGS) -Wno-unused-function -fsyntax-only -x c -
	$(Q)touch $@

# BPF: compile, then let bpftool link and strip (-g kept in BTF only).
bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $(BUILD)/$*.bpf.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $(BUILD)/$*.bpf.tmp.o

$(BUILD)/tests/%.bpf.o: tests/bpf/%.bpf.c $(BPF_HDRS)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(SKEL): $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name sluice > $@

# Man pages from the programs' own --help and --version (help2man), with
# the sections --help does not have in configs/man/*.h2m; sluicectl's page
# carries every command's --help under COMMANDS.
MANPAGES := $(BUILD)/man/sluiced.8 $(BUILD)/man/sluicectl.8
# sluice.yaml(5): prose in configs/man/sluice.yaml.5.in, its FIELDS from
# the loader's own tables (sluicectl schema --man).
MANPAGE5 := $(BUILD)/man/sluice.yaml.5
man: $(MANPAGES) $(MANPAGE5)
$(MANPAGE5): $(BUILD)/sluicectl configs/man/sluice.yaml.5.in VERSION
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BUILD)/sluicectl schema --man >$@.fields
	$(Q)sed -e '/^@FIELDS@$$/{r $@.fields' -e 'd}' -e 's/@VERSION@/$(SLUICE_VERSION)/' \
		-e "s/@DATE@/$$(date -u -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} +%Y-%m-%d)/" \
		configs/man/sluice.yaml.5.in >$@.tmp && mv $@.tmp $@ && rm -f $@.fields
$(BUILD)/man/sluiced.8: $(BUILD)/sluiced configs/man/sluiced.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)help2man --no-info --section 8 --name "connection-level overload protection" \
		--include configs/man/sluiced.h2m $(BUILD)/sluiced >$@.tmp && mv $@.tmp $@
$(BUILD)/man/sluicectl.8: $(BUILD)/sluicectl configs/man/sluicectl.h2m
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ cat configs/man/sluicectl.h2m; echo; echo "[COMMANDS]"; \
	  for c in $$($(BUILD)/sluicectl --help | awk '/^Commands:/ { f = 1; next } /^$$/ { f = 0 } f { print $$1 }'); do \
	    echo ".SS $$c"; echo ".nf"; \
	    $(BUILD)/sluicectl $$c --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; \
	    echo ".fi"; \
	  done; } >$(BUILD)/man/sluicectl.h2m
	$(Q)help2man --no-info --section 8 --name "inspect, explain and control sluice" \
		--include $(BUILD)/man/sluicectl.h2m $(BUILD)/sluicectl >$@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=...]: the two programs, the
# systemd unit, bash completion, the man pages, and /etc/sluice/sluice.yaml
# from configs/default.yaml unless one is there.  uninstall keeps the config.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
# systemd's own unit directory for PREFIX (pkg-config systemd, with its
# rootprefix moved to PREFIX so a staged install never writes outside it);
# the Debian package passes the distribution's, /lib/systemd/system.
UNITDIR    ?= $(or $(shell pkg-config --define-variable=rootprefix=$(PREFIX) \
		--variable=systemdsystemunitdir systemd 2>/dev/null),$(PREFIX)/lib/systemd/system)
COMPLDIR   ?= $(PREFIX)/share/bash-completion/completions
MAN8DIR    ?= $(PREFIX)/share/man/man8
MAN5DIR    ?= $(PREFIX)/share/man/man5
install: $(BUILD)/sluiced $(BUILD)/sluicectl $(MANPAGES) $(MANPAGE5)
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPLDIR) \
		$(DESTDIR)$(MAN8DIR) $(DESTDIR)$(MAN5DIR)
	$(Q)install -m 0644 $(MANPAGES) $(DESTDIR)$(MAN8DIR)/
	$(Q)install -m 0644 $(MANPAGE5) $(DESTDIR)$(MAN5DIR)/
	$(Q)install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/sluice
	$(Q)install -m 0755 $(BUILD)/sluiced $(DESTDIR)$(SBINDIR)/sluiced
	$(Q)install -m 0755 $(BUILD)/sluicectl $(DESTDIR)$(BINDIR)/sluicectl
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		configs/systemd/sluiced.service.in >$(DESTDIR)$(UNITDIR)/sluiced.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/sluiced.service
	$(Q)install -m 0644 configs/bash-completion/sluicectl $(DESTDIR)$(COMPLDIR)/sluicectl
	$(Q)if [ -e $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.yaml ]; then \
		echo "  keep     $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.yaml (yours)"; \
	else install -m 0644 configs/default.yaml $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.yaml; fi

uninstall:
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/sluiced $(DESTDIR)$(BINDIR)/sluicectl \
		$(DESTDIR)$(UNITDIR)/sluiced.service $(DESTDIR)$(COMPLDIR)/sluicectl \
		$(DESTDIR)$(MAN8DIR)/sluiced.8 $(DESTDIR)$(MAN8DIR)/sluicectl.8 $(DESTDIR)$(MAN5DIR)/sluice.yaml.5
	$(Q)echo "  kept     $(DESTDIR)$(SYSCONFDIR)/sluice/sluice.yaml"

# The version: VERSION, and the commit it was built from (git describe),
# in a header rewritten only when it changes (lib/version.c includes it).
SLUICE_VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
SLUICE_GIT     := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(BUILD)/sluice_version.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define SLUICE_VERSION "%s"\n#define SLUICE_GIT "%s"\n' '$(SLUICE_VERSION)' '$(SLUICE_GIT)' >$@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/lib/version.o: $(BUILD)/sluice_version.h
FORCE:

# Every object may include the skeleton (the data plane's do): generate it
# first; -MMD takes care of the rest.
$(BUILD)/%.o: user/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

define layer_archive
$(call layer_lib,$(1)): $(call obj_of,$(call layer_srcs,$(1)))
	$$(call msg,AR,$$@)
	$$(Q)rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call layer_archive,$(l))))

# sluiced tells systemd when it is ready, reloading or stopping, and feeds
# its watchdog (daemon/service_manager.c): libsystemd.
$(BUILD)/sluiced: $(BUILD)/daemon/sluiced.o $(call layer_lib,daemon) $(DP_LIBS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lsystemd

# sluicectl speaks the daemon's control protocol (daemon/control.h): that
# one object, not the daemon's layer.
$(BUILD)/sluicectl: $(BUILD)/ctl/sluicectl.o $(call layer_lib,ctl) $(BUILD)/daemon/control.o $(DP_LIBS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -ljansson

# The manifests' checker reads YAML as the configuration loader does
# (config/yaml_doc) and writes JSON (jansson).
$(BUILD)/lab_yaml2json: tests/lab/lab_yaml2json.c tests/lab/lab_cli.h $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -ljansson

# The table filler writes the pinned maps: the map ABI and libbpf.
$(BUILD)/lab_conns: tests/lab/lab_conns.c tests/lab/lab_cli.h include/sluice_abi.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $< -o $@ $(LDLIBS_BPF) -lm

$(BUILD)/tests/kernels/sluice_unbounded.bpf.o: bpf/sluice.bpf.c $(BPF_HDRS)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DSLUICE_TEST_UNBOUNDED -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(BUILD)/tests/kernels/progs_load: tests/kernels/progs_load.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $< -o $@ $(LDLIBS_BPF)

$(BUILD)/lab_%: tests/lab/lab_%.c tests/lab/lab_cli.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) $< -o $@ -lpthread -lm

# What to link: the prerequisites less the headers -MMD added to them.
LINK_INPUTS = $(filter %.c %.o %.a,$^)

# Unit tests: pure layers by default; a test of an adapter names what it needs.
TEST_CFLAGS = $(ALL_CFLAGS) -Itests/unit -Itests/packet
$(BUILD)/tests/unit/%: tests/unit/%.c $(CORE_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka -ljansson

$(BUILD)/tests/unit/daemon/test_request_server: tests/unit/daemon/test_request_server.c \
		$(BUILD)/daemon/request_server.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka

$(BUILD)/tests/unit/daemon/test_ext_signal: tests/unit/daemon/test_ext_signal.c \
		$(BUILD)/daemon/ext_signal.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka

$(BUILD)/tests/unit/daemon/test_flow_metrics: tests/unit/daemon/test_flow_metrics.c \
		$(BUILD)/daemon/flow_metrics.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka

# The fleet's keys (the layout and values every host writes and reads) and
# one host's sync step over them.
$(BUILD)/tests/unit/daemon/test_fleet_keys $(BUILD)/tests/unit/daemon/test_fleet_step: \
		$(BUILD)/tests/unit/daemon/%: tests/unit/daemon/%.c $(BUILD)/daemon/fleet_keys.o \
		$(BUILD)/daemon/fleet_step.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka -ljansson

# The fleet's etcd client, against a real etcd (etcd-server) on loopback.
$(BUILD)/tests/unit/daemon/test_etcd: tests/unit/daemon/test_etcd.c $(BUILD)/daemon/etcd_v3.o \
		$(BUILD)/daemon/etcd_http.o $(BUILD)/daemon/fleet_sync.o $(BUILD)/daemon/fleet_step.o \
		$(BUILD)/daemon/fleet_keys.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka -ljansson -lcurl

# sluiced's command line: its table through lib/'s parser (and --check's
# probes, in the data plane's layer).
$(BUILD)/tests/unit/daemon/test_daemon_opts: tests/unit/daemon/test_daemon_opts.c \
		$(BUILD)/daemon/daemon_opts.o $(DP_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka

$(BUILD)/tests/unit/daemon/test_control: tests/unit/daemon/test_control.c $(BUILD)/daemon/control.o \
		$(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka -ljansson

# The configuration tests share their YAML heads and asserting loaders.
$(BUILD)/tests/unit/config/test_%: tests/unit/config/test_%.c tests/unit/config/config_helpers.c $(CORE_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka -ljansson

# Where sluicectl finds sluiced: the configuration's pinDir and controlSocket.
$(BUILD)/tests/unit/ctl/test_daemon_paths: tests/unit/ctl/test_daemon_paths.c $(BUILD)/ctl/daemon_paths.o \
		$(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS) -lcmocka

# The option parser (lib/) with sluicectl's globals; nothing else of the CLI.
$(BUILD)/tests/unit/ctl/test_options: tests/unit/ctl/test_options.c $(BUILD)/ctl/options.o $(CORE_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ -lm -lcmocka

# policy_rt is an adapter (it writes the gate maps when it has a data path);
# its unit test runs it without one, so it links the daemon layer and libbpf.
# The admission test runs the journey over real BPF maps (no programs).
$(BUILD)/tests/unit/daemon/test_policy_rt $(BUILD)/tests/unit/daemon/test_admission: \
		$(BUILD)/tests/unit/daemon/%: tests/unit/daemon/%.c \
		$(call layer_lib,daemon) $(DP_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka -ljansson

# The socket-table adapter is tested against the kernel's own table, and
# reconcile against a real connection map.
$(BUILD)/tests/unit/dataplane/%: tests/unit/dataplane/%.c $(DP_LIBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(LINK_FLAGS) $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka

# Packet tests: one file per subject over one harness (tests/packet/harness.c);
# the classification differential test brings its own.
$(BUILD)/tests/packet/test_classify: tests/packet/test_classify.c tests/packet/tenants.c $(DP_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) -Itests/packet $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka

$(BUILD)/tests/packet/test_%: tests/packet/test_%.c tests/packet/harness.c $(DP_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) -Itests/packet $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) $(LDLIBS) -lcmocka

$(BUILD)/bench_%: tests/bench/bench_%.c tests/packet/frames.h tests/packet/tenants.c $(DP_LIBS) | $(SKEL)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LINK_FLAGS) -Itests/packet $< tests/packet/tenants.c $(DP_LIBS) -o $@ $(LDLIBS_BPF) $(LDLIBS)

# The builds the top-level targets start run on every core (a fresh
# clone's make test builds twice: plain and sanitized); JOBS=1 for a
# serial build.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

# Every suite needs root and BPF; the runner fails loudly without them.
# The unit and packet suites run once, first (they fail within a minute),
# built with ASan + UBSan: the same code as the plain build, checked
# harder (make test-fast runs them plain).  Then the fuzz corpora.  The
# e2e suites run the plain build, whose timing they bound, with the kernel
# matrix beside them on one core (tests/run-all.sh); make test SANITIZE=1
# runs them sanitized too.
test: deps kernels
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)scripts/check_includes.sh
	$(Q)scripts/check_cycles.sh $(BUILD)
ifneq ($(SANITIZE),1)
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory SANITIZE=1 test-sanitized
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory fuzz-replay
	$(Q)BUILD=$(BUILD) tests/run-all.sh e2e kernels
else
	$(Q)BUILD=$(BUILD) tests/run-all.sh
endif

# The kernel matrix alone (tests/kernels/): Debian 12's own 6.1 and its
# 6.12, each booted under QEMU on this host's root filesystem, load every
# program and run the packet suite, test_smoke and test_impatient.
# KERNELS="6.1" picks kernels by version; `make kernels` fetches them into
# /var/cache/sluice/kernels (never this host's boot path).
kernels: deps
	$(Q)scripts/fetch-kernels.sh >/dev/null

test-kernels: deps kernels
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/run-all.sh kernels

# The fast loop for development (under 3 minutes): unit, packet and one
# e2e smoke test of admit, defer and refuse on the lab's bare client end.
test-fast: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/run-all.sh unit packet e2e/test_smoke

# Proof of stability: the e2e suite N times (HOG=K: one core busy in run
# K), and every test that ever failed, how often and with what.
N ?= 3
REPEAT_SUITES ?= e2e
test-repeat: deps
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/repeat.sh $(if $(HOG),--hog $(HOG)) $(N) $(REPEAT_SUITES)

# Unprivileged: the pure layers' unit tests (no BPF, no namespaces, no
# packages installed), for a package build or a developer without root.
PURE_UNIT_TESTS := $(filter $(foreach l,lib config engine ctl,$(BUILD)/tests/unit/$(l)/%),$(UNIT_TESTS))
check: $(PURE_UNIT_TESTS)
	$(Q)BUILD=$(BUILD) tests/run-all.sh check

test-sanitized: $(BPF_OBJ) $(TEST_BPF) $(UNIT_TESTS) $(PKT_TESTS)
	$(Q)echo "== unit and packet suites, with ASan + UBSan ($(BUILD))"
	$(Q)BUILD=$(BUILD) $(SAN_ENV) tests/run-all.sh unit packet

# make demo installs only what it runs (scripts/install-deps.sh --demo).
demo:
	$(Q)scripts/install-deps.sh --demo
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)scripts/demo.sh

bench:
	$(Q)scripts/install-deps.sh --bench
	$(Q)$(MAKE) -j$(JOBS) --no-print-directory all
	$(Q)scripts/bench.sh

# libFuzzer + ASan/UBSan, each target bounded in time (FUZZ_SECONDS):
#   config   the YAML loader           trace    sluicectl replay's CSV parser
#   control  the control protocol      options  sluicectl's option parser
#   frames   the XDP program itself, in the kernel, against the reference
#            classifier of the packet tests (root)
#   http     the metrics listener's HTTP request parsing
#   held_frame  a held frame's parser and checksum repair (lib/frame.c)
# Seeds are in tests/fuzz/corpus-<target>/ (the config's in tests/fuzz/corpus);
# new inputs go to build/fuzz-corpus-<target>/, the run's log to
# build/fuzz-<target>.log (the targets' own output is closed:
# -close_fd_mask=3).  An input that fails is
# written as crash-*: add it to the seeds so it keeps being replayed.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= config control trace options frames http held_frame
FUZZ_CC    = $(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	     -D_GNU_SOURCE -Iinclude -Iuser -I$(BUILD)
FUZZ_SRCS  := $(call layer_srcs,lib) $(call layer_srcs,config) $(call layer_srcs,engine)

$(BUILD)/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_SRCS) | $(BUILD)/sluice_version.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@ -lyaml -lpcre2-8 -lm
# The control protocol's contract writes its change replies (JSON, and the
# configuration's diagnostics).
$(BUILD)/fuzz_control: tests/fuzz/fuzz_control.c user/daemon/control.c user/lib/json_out.c \
		user/config/diag.c user/lib/grow.c
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@
$(BUILD)/fuzz_trace: tests/fuzz/fuzz_trace.c user/ctl/trace.c
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@ -lm
$(BUILD)/fuzz_options: tests/fuzz/fuzz_options.c user/ctl/options.c user/lib/options.c user/lib/nearest.c
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@ -lm
$(BUILD)/fuzz_http: tests/fuzz/fuzz_http.c user/lib/http_request.c
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@
$(BUILD)/fuzz_held_frame: tests/fuzz/fuzz_held_frame.c user/lib/frame.c
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(LINK_INPUTS) -o $@
$(BUILD)/fuzz_frames: tests/fuzz/fuzz_frames.c tests/packet/harness.c | $(SKEL)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) -Itests/packet $(LINK_INPUTS) -o $@ $(LDLIBS_BPF) -lcmocka

# Every fuzz target over its seeds once (regressions stay fixed; the
# targets keep building): part of make test.
fuzz-replay: $(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz_$(t))
	$(Q)echo "== fuzz targets over their seed corpora"
	$(Q)for t in $(FUZZ_TARGETS); do \
		seeds=tests/fuzz/corpus-$$t; [ $$t = config ] && seeds=tests/fuzz/corpus; \
		$(BUILD)/fuzz_$$t -runs=0 -close_fd_mask=3 $$seeds >$(BUILD)/fuzz-replay-$$t.log 2>&1 && \
			echo "   ok - fuzz_$$t replays $$(ls $$seeds | wc -l) seeds" || \
			{ echo "   not ok - fuzz_$$t on its seeds (see $(BUILD)/fuzz-replay-$$t.log)"; exit 1; }; \
	done

fuzz: deps $(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz_$(t))
	$(Q)for t in $(FUZZ_TARGETS); do \
		seeds=tests/fuzz/corpus-$$t; [ $$t = config ] && seeds=tests/fuzz/corpus; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		mkdir -p $(BUILD)/fuzz-corpus-$$t; \
		echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
		$(BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -close_fd_mask=3 -artifact_prefix=$(BUILD)/fuzz-$$t- $$dict \
			$(BUILD)/fuzz-corpus-$$t $$seeds >$(BUILD)/fuzz-$$t.log 2>&1; rc=$$?; \
		grep -E 'DONE|stat::number_of_executed_units|SUMMARY|Test unit written' $(BUILD)/fuzz-$$t.log; \
		[ $$rc -eq 0 ] || { echo "fuzz $$t FAILED (see $(BUILD)/fuzz-$$t.log)"; exit 1; }; \
	done

clean:
	$(Q)rm -rf build build-san bpf/*.bpf.o

-include $(USER_OBJS:.o=.d) $(wildcard $(BUILD)/tests/unit/*/*.d $(BUILD)/tests/packet/*.d $(BUILD)/*.d)
