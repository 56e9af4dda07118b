// postconv_list.h — the post-conv arms, once (position = id = gdn_postconv_arm).
#pragma once

#include "common/arms/postconv_tree.h"
#include "common/arms/postconv_token_tile.h"
#include "common/arms/postconv_seq4.h"
#include "common/arms/postconv_vec_tile.h"

#define GDN_POSTCONV_ARM_LIST(X) \
  X(postconv::ArmTree)           \
  X(postconv::ArmTokenTile)      \
  X(postconv::ArmSeq4)           \
  X(postconv::ArmVecTile)
