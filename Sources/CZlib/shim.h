#include <zlib.h>

/// `deflateInit2` and `inflateInit2` are macros in zlib.h; Swift cannot call macros, so these wrap them.
static inline int czlib_deflateInit2(z_streamp strm, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, memLevel, strategy);
}

static inline int czlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
