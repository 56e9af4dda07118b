// conv_planted.cu — the planted-mutant builds of every conv arm (conv::PlantedMutants: the bodies'
// M::is(p, mutant) tests read args.mutant). Kept apart from the production kernels of conv.cu, which
// have no mutant branch at all; selected by the plan when args.mutant != 0.
#include "cuda/arm_launch.cuh"

namespace gdn {
namespace cudaarm {

#define GDN_PLANTED(Arm) &conv_arm<Arm, conv::PlantedMutants>,
const ConvLaunch kConvPlanted[] = {GDN_CONV_ARM_LIST(GDN_PLANTED)};
#undef GDN_PLANTED

}  // namespace cudaarm
}  // namespace gdn
