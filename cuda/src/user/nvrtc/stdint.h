// Fixed-width integers for NVRTC (see README.md in this folder), as glibc defines them on LP64 Linux,
// so that the device module sees the same types as libgdn's own builds.
#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define UINT32_MAX 4294967295U
