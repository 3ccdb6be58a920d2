// gpumv D3D12 kit shim: `#include <dxgi.h>` in code written for Windows resolves here when the kit's
// shim directory comes first on the include path; it brings the kit's Win32 layer, Debian's
// d3d12.h and the kit's DXGI adapter declarations.
#pragma once
#include <gpumv_d3d12/kit.h>
