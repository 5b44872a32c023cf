# Shared by every D contestant: one compiler (LDC's ldc2, druntime and Phobos only), one set of flags
# (-O3 -release: LDC's optimised release build, which drops asserts and the bounds checks of @system
# code; no LTO, no -mcpu), output in build/. A contestant's Makefile sets SRCS and includes this file.
D_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
DC := ldc2
DFLAGS := -O3 -release -I$(D_DIR)common
COMMON_SRCS := $(wildcard $(D_DIR)common/sb/*.d)

build/server: $(SRCS) $(COMMON_SRCS) $(D_DIR)common.mk Makefile
	@mkdir -p build
	$(DC) $(DFLAGS) -od=build -of=$@ $(SRCS) $(COMMON_SRCS)

.PHONY: clean
clean:
	rm -rf build
