// update_list.h — the causal-conv decode-update arms, once (position = id = gdn_conv_update_arm).
#pragma once

#include "common/arms/update_reference.h"
#include "common/arms/update_reg.h"

#define GDN_UPDATE_ARM_LIST(X) \
  X(update::ArmReference)      \
  X(update::ArmReg)
