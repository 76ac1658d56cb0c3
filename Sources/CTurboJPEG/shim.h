// CTurboJPEG: libjpeg-turbo's TurboJPEG 2 API (tjInitDecompress, tjDecompressHeader3, tjDecompressToYUVPlanes),
// which imports into Swift as is. Used to decode MJPEG camera frames.
#ifndef COLORCAM_CTURBOJPEG_SHIM_H
#define COLORCAM_CTURBOJPEG_SHIM_H
#include <turbojpeg.h>
#endif
