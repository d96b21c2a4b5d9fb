# hwgym build. `make` builds everything into build/bin and build/lib.
#   make test    install deps, build under ASan+UBSan (build/asan), run C and Python tests, fuzz
#   make check   only the tests a change touches (scripts/check.sh; BASE=rev to compare with)
#   make demo    install deps, build, run the demo (scripts/demo.sh)
#   make bench   build -O2 and run every benchmark (figures go to bench/README.md by hand)
#   make paper-marl  reproduce the MARL papers' comparisons into docs/results/marl.md
# Knobs: BUILD (output dir), OPT, SAN, ENV_FAMS (env families to link), TEST_GROUPS,
#        PYTHON (an interpreter that can import zmq, msgpack and numpy).
BUILD ?= build
CC ?= cc
OPT ?= -O2
SAN ?=
PREFIX ?= /usr/local
# extra flags for the pip install of the Python client in `make install` (e.g. --user, --no-deps)
PIP_FLAGS ?=

PKGS := libzmq msgpack sqlite3 jansson nlopt openblas lapacke yaml-0.1 libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) gsl 2>/dev/null)
# gsl's own .pc links gslcblas, which clashes with OpenBLAS's cblas (DESIGN.md): link -lgsl only.
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lgsl -lpthread -lm
CRIT_LIBS := $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion)

# agents/lib is in rooms (agents/lib/README.md): nn, rl, search, run; headers are found by name
AGENTLIB_ROOMS := nn rl search run
INCS := -I. -Iprotocol -Ienvs -Iserver -Iclients/c $(patsubst %,-Iagents/lib/%,$(AGENTLIB_ROOMS))
CFLAGS := -std=c11 -D_GNU_SOURCE -g $(OPT) $(SAN) -Wall -Wextra -Werror -fPIC -MMD -MP $(INCS) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SAN) $(EXTRA_LDFLAGS)

# The first python3 on PATH may not see Debian's python3-zmq/msgpack/numpy; fall back to Debian's.
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import zmq, msgpack, numpy' >/dev/null 2>&1 && { command -v $$p; break; }; done)

dirs_in = $(sort $(notdir $(patsubst %/,%,$(wildcard $(1)/*/))))
ENV_FAMS ?= $(call dirs_in,envs)
AGENTS ?= $(filter-out lib,$(call dirs_in,agents))
TEST_GROUPS ?= $(filter-out common,$(call dirs_in,tests/c))

PROTO_SRC := $(wildcard protocol/*.c)
ENV_SRC := envs/registry.c $(foreach f,$(ENV_FAMS),$(wildcard envs/$(f)/*.c))
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
CLIENT_SRC := $(wildcard clients/c/*.c)
CLI_SRC := $(wildcard clients/cli/*.c)
AGENTLIB_SRC := $(foreach r,$(AGENTLIB_ROOMS),$(wildcard agents/lib/$(r)/*.c))
TESTCOMMON_SRC := $(wildcard tests/c/common/*.c)
BENCH_SRC := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
PROTO_OBJ := $(call obj,$(PROTO_SRC))
ENV_OBJ := $(call obj,$(ENV_SRC))
SERVER_OBJ := $(call obj,$(SERVER_SRC))
CLIENT_OBJ := $(call obj,$(CLIENT_SRC))
CLI_OBJ := $(call obj,$(CLI_SRC))
AGENTLIB_OBJ := $(call obj,$(AGENTLIB_SRC))
TESTCOMMON_OBJ := $(call obj,$(TESTCOMMON_SRC))

LIB_PROTO := $(BUILD)/lib/libhwgym_proto.a
LIB_ENVS := $(BUILD)/lib/libhwgym_envs.a
LIB_SERVER := $(BUILD)/lib/libhwgym_server.a
LIB_CLIENT := $(BUILD)/lib/libhwgym.a
SO_CLIENT := $(BUILD)/lib/libhwgym.so
LIB_AGENTS := $(BUILD)/lib/libhwgym_agents.a
# envs register through weak symbols, so the whole archive must be linked
LINK_ENVS := -Wl,--whole-archive $(LIB_ENVS) -Wl,--no-whole-archive

BINS := $(BUILD)/bin/hwgym-server $(BUILD)/bin/hwgym $(patsubst %,$(BUILD)/bin/hwgym-%,$(AGENTS))
TESTS := $(patsubst %,$(BUILD)/tests/%,$(TEST_GROUPS))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all tests test test-c test-py demo bench deps clean install help paper-marl demo-run paper-marl-run
all: $(BINS) $(LIB_CLIENT) $(SO_CLIENT)

help:
	@sed -n '1,8p' Makefile

deps:
	@scripts/install-deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB_PROTO): $(PROTO_OBJ)
$(LIB_ENVS): $(ENV_OBJ)
$(LIB_SERVER): $(SERVER_OBJ)
$(LIB_CLIENT): $(CLIENT_OBJ) $(PROTO_OBJ)
$(LIB_AGENTS): $(AGENTLIB_OBJ)
$(BUILD)/lib/%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(SO_CLIENT): $(CLIENT_OBJ) $(PROTO_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/bin/hwgym-server: $(call obj,server/main.c) $(LIB_SERVER) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(LIB_SERVER) $(LINK_ENVS) $(LIB_PROTO) $(LDFLAGS) $(PKG_LIBS)

$(BUILD)/bin/hwgym: $(CLI_OBJ) $(LIB_AGENTS) $(LIB_CLIENT) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CLI_OBJ) $(LIB_AGENTS) $(LIB_CLIENT) $(LINK_ENVS) $(LIB_PROTO) $(LDFLAGS) $(PKG_LIBS)

define AGENT_RULE
$(BUILD)/bin/hwgym-$(1): $(call obj,$(wildcard agents/$(1)/*.c)) $(LIB_AGENTS) $(LIB_CLIENT) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $$(dir $$@)
	$$(CC) -o $$@ $(call obj,$(wildcard agents/$(1)/*.c)) $(LIB_AGENTS) $(LIB_CLIENT) $(LINK_ENVS) $(LIB_PROTO) $$(LDFLAGS) $$(PKG_LIBS)
endef
$(foreach a,$(AGENTS),$(eval $(call AGENT_RULE,$(a))))

define TEST_RULE
$(BUILD)/tests/$(1): $(call obj,$(wildcard tests/c/$(1)/*.c)) $(TESTCOMMON_OBJ) $(LIB_AGENTS) $(LIB_SERVER) $(LIB_CLIENT) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $$(dir $$@)
	$$(CC) -o $$@ $(call obj,$(wildcard tests/c/$(1)/*.c)) $(TESTCOMMON_OBJ) $(LIB_AGENTS) $(LIB_SERVER) $(LIB_CLIENT) $(LINK_ENVS) $(LIB_PROTO) $$(LDFLAGS) $$(PKG_LIBS) $$(CRIT_LIBS)
endef
$(foreach t,$(TEST_GROUPS),$(eval $(call TEST_RULE,$(t))))

$(BUILD)/bench/%: $(call obj,bench/%.c) $(LIB_AGENTS) $(LIB_SERVER) $(LIB_CLIENT) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(LIB_AGENTS) $(LIB_SERVER) $(LIB_CLIENT) $(LINK_ENVS) $(LIB_PROTO) $(LDFLAGS) $(PKG_LIBS)
# a bench of an agent's internals links that agent's objects, all but its main.c
BENCH_AGENT = $(call obj,$(filter-out agents/$(1)/main.c,$(wildcard agents/$(1)/*.c)))
$(BUILD)/bench/bench_search: $(call BENCH_AGENT,search)

tests: $(TESTS)

ASAN_BUILD := build/asan
ASAN_MAKE = $(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 \
	SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
export ASAN_OPTIONS ?= abort_on_error=0:detect_leaks=1
export LSAN_OPTIONS ?= suppressions=$(abspath tests/lsan.supp):print_suppressions=0
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

# The suite's phases (scripts/test-all.sh): the ASan build (-j$(JOBS)), then the C groups
# (TEST_PAR at once, slowest first) beside the Python suite, then the fuzzers; it prints the
# time of every phase and group at the end. `make check`: only the tests a change touches.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps
	@JOBS=$(JOBS) ASAN_BUILD=$(ASAN_BUILD) scripts/test-all.sh

# pieces test-all.sh and check.sh call (the ASan build, the interpreter they test with)
asan-build:
	@$(ASAN_MAKE) -j$(JOBS) all tests
print-python:
	@echo $(PYTHON)
asan-test-c:
	@$(ASAN_MAKE) test-c
asan-test-py:
	@$(ASAN_MAKE) test-py
.PHONY: check asan-build print-python asan-test-c asan-test-py
check:
	@scripts/check.sh $(BASE)

# Runs the C suites and the Python suite of $(BUILD); prints one "N passed, N failed" line.
test-c: $(TESTS) $(BINS)
	@COUNTS_FILE=$(BUILD)/test-c.counts scripts/run-tests.sh c $(BUILD) $(TEST_GROUPS)

test-py: all
	@[ -n "$(PYTHON)" ] || { echo "no python3 that can import zmq, msgpack, numpy: run scripts/install-deps.sh or set PYTHON=" >&2; exit 1; }
	@HWGYM_BIN=$(abspath $(BUILD)/bin) PYTHONPATH=$(abspath clients/python) PYTHON=$(PYTHON) scripts/run-py-tests.sh $(BUILD)/test-py.counts

# Entry targets install the deps first, then build in a recursive make: this Makefile evaluates
# pkg-config (and PYTHON) when it is parsed, which on a fresh machine is before the -dev packages
# exist. tests/python/test_fresh.py checks this with a pkg-config that fails until deps ran.
DEMO_GOALS ?= all
DEMO_RUN ?= scripts/demo.sh
demo: deps
	@$(MAKE) --no-print-directory demo-run
demo-run: $(DEMO_GOALS)
	@PYTHON=$(PYTHON) BUILD=$(BUILD) $(DEMO_RUN)

bench: deps
	@$(MAKE) --no-print-directory BUILD=build/bench-O2 OPT=-O2 all $(patsubst $(BUILD)/%,build/bench-O2/%,$(BENCHES))
	@BUILD=build/bench-O2 scripts/run-bench.sh

PAPER_GOALS ?= all
PAPER_RUN ?= scripts/paper-marl.sh
paper-marl: deps
	@$(MAKE) --no-print-directory paper-marl-run
paper-marl-run: $(PAPER_GOALS)
	@BUILD=$(BUILD) PYTHON=$(PYTHON) $(PAPER_RUN)

.PHONY: paper-rlsched
paper-rlsched: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) PYTHON=$(PYTHON) scripts/paper-rlsched.sh

.PHONY: paper-egrl
paper-egrl: deps all
	@BUILD=$(BUILD) PYTHON=$(PYTHON) scripts/paper-egrl.sh

.PHONY: paper-egrl-width
# the critic-width ablation of paper-egrl (32 vs 128) into docs/results/egrl-critic-width.md
paper-egrl-width: deps all
	@BUILD=$(BUILD) PYTHON=$(PYTHON) scripts/paper-egrl-width.sh

.PHONY: paper-mmap
# reproduce the MMap-MuZero paper's Table 2 / Figure 5, Table 3 and Figure 7 into docs/results/mmap.md
paper-mmap: deps all
	@BUILD=$(BUILD) PYTHON=$(PYTHON) scripts/paper-mmap.sh

install: all
	install -d $(PREFIX)/bin $(PREFIX)/lib $(PREFIX)/include/hwgym
	install -m 755 $(BINS) $(PREFIX)/bin
	install -m 644 $(LIB_CLIENT) $(SO_CLIENT) $(PREFIX)/lib
	install -m 644 clients/c/*.h protocol/*.h $(PREFIX)/include/hwgym
	@[ -n "$(PYTHON)" ] || { echo "make install: no python3 here can import zmq, msgpack and numpy (tried python3 on PATH, then /usr/bin/python3). Install Debian's python3-zmq python3-msgpack python3-numpy python3-pip python3-wheel, or pass PYTHON=/path/to/python3 that has them." >&2; exit 1; }
	@echo "installing the Python client with $(PYTHON)"
	PIP_BREAK_SYSTEM_PACKAGES=1 $(PYTHON) -m pip install --no-build-isolation $(PIP_FLAGS) ./clients/python

clean:
	rm -rf build

# libFuzzer harnesses (fuzz/, docs/security.md): `make fuzz FUZZ_SECONDS=N` builds them with clang
# (ASan+UBSan) and runs each for N s on its committed seed corpus; fails on any finding.
# `make test` runs fuzz-test: 30 s each when clang is installed, skipped otherwise.
# FUZZ_SEED=N replays one seed's mutation sequence (a random seed by default).
FUZZ_SECONDS ?= 30
FUZZ_CC ?= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null)
FUZZ_BUILD := build/fuzz
FUZZ_BINS := $(patsubst fuzz/%.c,$(FUZZ_BUILD)/fuzz/%,$(wildcard fuzz/*.c))
# fuzz-build only builds them (make test starts it beside the test groups); FUZZ_PAR harnesses
# run at once (default: all of them; each is one process bounded by FUZZ_SECONDS of wall time).
FUZZ_PAR ?= $(words $(FUZZ_BINS))
.PHONY: fuzz fuzz-test fuzz-build
fuzz-build:
	@[ -n "$(FUZZ_CC)" ] || { echo "fuzz: needs clang and libFuzzer (apt-get install clang-14 libfuzzer-14-dev)" >&2; exit 1; }
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 EXTRA_CFLAGS=-Wno-error \
	  SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -fno-sanitize-recover=undefined" $(FUZZ_BINS)
fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_PAR=$(FUZZ_PAR) fuzz/run.sh $(FUZZ_BUILD)
fuzz-test:
	@if [ -n "$(FUZZ_CC)" ]; then $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30; else echo "fuzz: skipped (no clang-14)"; fi
print-fuzz-cc:
	@echo $(FUZZ_CC)
$(BUILD)/fuzz/%: $(call obj,fuzz/%.c) $(LIB_AGENTS) $(LIB_CLIENT) $(LIB_SERVER) $(LIB_ENVS) $(LIB_PROTO)
	@mkdir -p $(dir $@)
	$(CC) -fsanitize=fuzzer -o $@ $< $(LIB_AGENTS) $(LIB_CLIENT) $(LIB_SERVER) $(LINK_ENVS) $(LIB_PROTO) $(LDFLAGS) $(PKG_LIBS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

.PHONY: leaderboard
# every agent on every env with controls and IQM/bootstrap statistics (docs/leaderboard.md):
# `make leaderboard` runs the quick suite into $(BUILD)/leaderboard (index.html, leaderboard.md),
# continuing a previous run; LEADERBOARD_ARGS="leaderboard/headline.json --out DIR --resume" for another suite.
LEADERBOARD_ARGS ?= --quick --out $(BUILD)/leaderboard --resume
leaderboard: deps all
	@OPENBLAS_NUM_THREADS=1 $(BUILD)/bin/hwgym leaderboard $(LEADERBOARD_ARGS)
