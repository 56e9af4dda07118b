// fused_list.h — the fused conv -> post-conv arms, once (position = id = gdn_fused_arm).
#pragma once

#include "common/arms/fused_head_tile.h"
#include "common/arms/fused_stream.h"

#define GDN_FUSED_ARM_LIST(X) \
  X(fused::ArmHeadTile)       \
  X(fused::ArmStream)         \
  X(fused::ArmStreamMufu)
