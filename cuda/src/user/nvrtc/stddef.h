// <stddef.h> for NVRTC (README.md in this folder): size_t is an NVRTC built-in; only NULL is missing.
#pragma once
#ifndef NULL
#define NULL 0
#endif
