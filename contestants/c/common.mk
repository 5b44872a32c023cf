# Shared by every C contestant: one compiler, one set of flags, output in build/.
# A contestant's Makefile sets SRCS (and LDLIBS) and includes this file.
C_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
CC ?= cc
CFLAGS := -O2 -std=gnu11 -Wall -Wextra -pthread -I$(C_DIR)
LDFLAGS := -pthread

build/server: $(SRCS) $(wildcard $(C_DIR)*.h) $(C_DIR)common.mk Makefile
	@mkdir -p build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(SRCS) $(LDLIBS)

.PHONY: clean
clean:
	rm -rf build
