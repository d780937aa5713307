/* Wine 8.0 (Debian 12's) has no bcryptprimitives.dll, whose ProcessPrng Rust's standard
 * library calls for every random seed since Rust 1.78 (Windows 10 and later have it), so
 * no Rust program starts there. scripts/cross.sh builds this stand-in into the test
 * prefix only: ProcessPrng over advapi32's RtlGenRandom (SystemFunction036), which Wine
 * has. Nothing here is shipped; a Wine that has the DLL uses its own. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
