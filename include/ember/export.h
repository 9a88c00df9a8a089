/* ember/export.h: EMBER_API marks what a shared libember exports (C and C++).
 *
 * ember is compiled with hidden symbols (-fvisibility=hidden); only declarations marked
 * EMBER_API are visible outside the library (EMBER_HIDDEN keeps private members of those out). On Windows a shared build exports them from the
 * DLL (EMBER_BUILDING) and imports them elsewhere; the build defines EMBER_SHARED for a shared
 * libember, also for its users. */
#ifndef EMBER_EXPORT_H
#define EMBER_EXPORT_H

#if defined(_WIN32) || defined(__CYGWIN__)
#  if defined(EMBER_SHARED) && defined(EMBER_BUILDING)
#    define EMBER_API __declspec(dllexport)
#  elif defined(EMBER_SHARED)
#    define EMBER_API __declspec(dllimport)
#  else
#    define EMBER_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define EMBER_API __attribute__((visibility("default")))
#else
#  define EMBER_API
#endif

/* EMBER_HIDDEN keeps a private member of an exported class (its pimpl, private constructors)
 * out of a shared libember's exports. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32) && !defined(__CYGWIN__)
#  define EMBER_HIDDEN __attribute__((visibility("hidden")))
#else
#  define EMBER_HIDDEN
#endif

#endif /* EMBER_EXPORT_H */
