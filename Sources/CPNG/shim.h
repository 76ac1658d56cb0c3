// CPNG: libpng's simplified read API (png_image_*), which imports into Swift as is.
#ifndef COLORCAM_CPNG_SHIM_H
#define COLORCAM_CPNG_SHIM_H
#include <png.h>

/// PNG_IMAGE_VERSION as a constant Swift can read.
static const unsigned int ccpng_image_version = PNG_IMAGE_VERSION;
/// PNG_FORMAT_RGB (3 bytes per pixel, R G B).
static const unsigned int ccpng_format_rgb = PNG_FORMAT_RGB;
/// PNG_IMAGE_FAILED(image) as a function.
static inline int ccpng_image_failed(png_imagep image) { return PNG_IMAGE_FAILED(*image); }
#endif
