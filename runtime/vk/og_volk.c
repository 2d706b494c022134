/* volk.c (Debian's libvulkan-volk-dev ships volk as source) compiled under
 * onegpu's names (og_volk.h). */
#include "og_volk_names.h"
#include <volk.c>
