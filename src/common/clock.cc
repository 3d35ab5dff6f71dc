#include "common/clock.h"

namespace hotline {

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

}  // namespace hotline
