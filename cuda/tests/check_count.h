// check_count.h — the counter of the native test programs that report "N checks, M failures" (the line
// test/native/smoke.test.ts looks for): check() counts one check and prints what failed.
#pragma once

#include <cstdio>

inline int g_checks = 0, g_failures = 0;

inline void check(bool ok, const char* what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what);
  }
}
