// The JSON line of an arms run (schema testbed.bench-arms/1, docs/data-formats.md
// section 3) and its stderr summary.
#pragma once

#include <string>

#include "arms_run.hpp"

namespace bench::arms {

// The slices this process's line carries: in one process, the sending side's
// records completed with the receiving side's; else the side's own.
std::vector<SliceRecord> line_slices(const ArmsRun &run);

std::string render_arms_json(const ArmsRun &run);
std::string render_arms_summary(const ArmsRun &run);

}  // namespace bench::arms
