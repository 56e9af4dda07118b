// arms_host.h — the host instantiations of the built-in arms, one function per family, each in its own
// translation unit (arms_host_conv.cpp, arms_host_update.cpp, arms_host_postconv.cpp, arms_host_fused.cpp).
#pragma once

#include <vector>

#include "common/registry.h"

namespace gdn {
namespace registry {

std::vector<Entry> conv_host_entries();
std::vector<Entry> update_host_entries();
std::vector<Entry> postconv_host_entries();
std::vector<Entry> fused_host_entries();

}  // namespace registry
}  // namespace gdn
