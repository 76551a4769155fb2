/* Placeholder translation unit for a folder library that has no sources yet. */
typedef int weft_empty_unit;
