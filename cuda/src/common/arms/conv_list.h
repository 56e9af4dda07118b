// conv_list.h — the causal-conv (prefill) arms, once. Position in GDN_CONV_ARM_LIST = the arm's id
// (args.arm); the first six are gdn_conv_arm's values and never move. Adding a built-in arm: its
// definition file in this folder, its #include here and its name at the end of the list
// (docs/MAINTAINING.md, "Adding a conv arm").
#pragma once

#include "common/arms/conv_scalar.h"
#include "common/arms/conv_tiled.h"
#include "common/arms/conv_reg.h"
#include "common/arms/conv_reg_k4.h"
#include "common/arms/conv_reg_k4x2.h"
#include "common/arms/conv_vec.h"
#include "common/arms/conv_reg_k4_c16.h"
#include "common/arms/conv_tile.h"
#include "common/arms/conv_stream.h"
#include "common/arms/conv_stream_mufu.h"

#define GDN_CONV_ARM_LIST(X) \
  X(conv::ArmScalar)         \
  X(conv::ArmTiled)          \
  X(conv::ArmReg)            \
  X(conv::ArmRegK4)          \
  X(conv::ArmRegK4x2)        \
  X(conv::ArmVec)            \
  X(conv::ArmRegK4C16)       \
  X(conv::ArmTile)           \
  X(conv::ArmStream)         \
  X(conv::ArmStreamMufu)
