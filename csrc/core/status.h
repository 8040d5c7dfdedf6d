#ifndef MB_CORE_STATUS_H
#define MB_CORE_STATUS_H
/* Status codes of every mbint kernel; the list lives in status.def. */
enum mb_status {
#define MB_STATUS(name, code, msg) name = code,
#include "status.def"
#undef MB_STATUS
};

/* Message of a status code ("unknown status" for codes not in status.def). */
const char *mb_status_str(int code);

#endif
