# Shared by every C++ contestant: one compiler, one set of flags (-O2 -DNDEBUG -std=c++20, no LTO), output in
# build/. A contestant's Makefile sets OBJS (its object files under build/), HDRS (the headers they
# include) and LDLIBS, then includes this file.
CPP_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
CXXFLAGS := -O2 -DNDEBUG -std=c++20 -pthread -Wall

build/server: $(OBJS)
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS)

build/%.o: %.cpp $(HDRS) $(CPP_DIR)common.mk Makefile | build
	$(CXX) $(CXXFLAGS) -c -o $@ $<

build:
	mkdir -p $@

.PHONY: clean
clean:
	rm -rf build
