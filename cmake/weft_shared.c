/* The shared library libweft.so is the object files of the folder libraries (CMakeLists.txt:
 * "installable library"); this file only gives the target a source of its own. Symbols are
 * hidden unless marked WEFT_API (include/weft/weft.h). */
typedef int weft_shared_unit;
