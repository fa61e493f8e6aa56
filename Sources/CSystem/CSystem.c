// SwiftPM needs one source file in a C target; every helper is `static inline` in include/CSystem.h.
#include "CSystem.h"
