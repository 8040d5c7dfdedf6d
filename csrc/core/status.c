#include "status.h"

const char *mb_status_str(int code)
{
    switch (code) {
#define MB_STATUS(name, c, msg) case c: return msg;
#include "status.def"
#undef MB_STATUS
    default: return "unknown status";
    }
}
