// Loss curve as a self-contained SVG image (no dependencies): training loss per logged step and
// held-out loss per evaluation, on shared axes with tick labels.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "train/checkpoint.h"

namespace hotline::train {

std::string LossCurveSvg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& eval,
                         const std::string& title);

}  // namespace hotline::train
