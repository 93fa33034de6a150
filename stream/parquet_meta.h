/* Parquet file metadata (the footer's FileMetaData) and page headers,
 * decoded from Thrift compact protocol (stream/thrift.h). Field numbers are
 * those of parquet-format's parquet.thrift. Only what a reader needs is
 * kept; the rest (statistics, indexes, bloom filters) is skipped. */
#ifndef SLUICE_STREAM_PARQUET_META_H
#define SLUICE_STREAM_PARQUET_META_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* physical types */
enum { PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96, PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY, PQ_FLBA };
/* repetition */
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
/* converted types (the legacy annotation) */
enum {
    PQ_CT_UTF8 = 0,
    PQ_CT_MAP = 1,
    PQ_CT_MAP_KEY_VALUE = 2,
    PQ_CT_LIST = 3,
    PQ_CT_ENUM = 4,
    PQ_CT_DECIMAL = 5,
    PQ_CT_DATE = 6,
    PQ_CT_TIME_MILLIS = 7,
    PQ_CT_TIME_MICROS = 8,
    PQ_CT_TIMESTAMP_MILLIS = 9,
    PQ_CT_TIMESTAMP_MICROS = 10,
    PQ_CT_UINT_8 = 11,
    PQ_CT_UINT_16 = 12,
    PQ_CT_UINT_32 = 13,
    PQ_CT_UINT_64 = 14,
    PQ_CT_INT_8 = 15,
    PQ_CT_INT_16 = 16,
    PQ_CT_INT_32 = 17,
    PQ_CT_INT_64 = 18,
    PQ_CT_JSON = 19,
    PQ_CT_BSON = 20,
    PQ_CT_INTERVAL = 21,
};
/* logical types (the LogicalType union's field numbers) */
enum {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1,
    PQ_LT_MAP = 2,
    PQ_LT_LIST = 3,
    PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5,
    PQ_LT_DATE = 6,
    PQ_LT_TIME = 7,
    PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10,
    PQ_LT_UNKNOWN = 11, /* the null type */
    PQ_LT_JSON = 12,
    PQ_LT_BSON = 13,
    PQ_LT_UUID = 14,
    PQ_LT_FLOAT16 = 15,
};
enum { PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS = 2, PQ_UNIT_NANOS = 3 };
/* codecs */
enum {
    PQ_UNCOMPRESSED = 0,
    PQ_SNAPPY = 1,
    PQ_GZIP = 2,
    PQ_LZO = 3,
    PQ_BROTLI = 4,
    PQ_LZ4 = 5, /* Hadoop-framed LZ4 (or, from old writers, a raw block) */
    PQ_ZSTD = 6,
    PQ_LZ4_RAW = 7,
};
/* encodings */
enum {
    PQ_PLAIN = 0,
    PQ_PLAIN_DICTIONARY = 2,
    PQ_RLE = 3,
    PQ_BIT_PACKED = 4,
    PQ_DELTA_BINARY_PACKED = 5,
    PQ_DELTA_LENGTH_BYTE_ARRAY = 6,
    PQ_DELTA_BYTE_ARRAY = 7,
    PQ_RLE_DICTIONARY = 8,
    PQ_BYTE_STREAM_SPLIT = 9,
};
/* page types */
enum { PQ_DATA_PAGE = 0, PQ_INDEX_PAGE = 1, PQ_DICTIONARY_PAGE = 2, PQ_DATA_PAGE_V2 = 3 };

typedef struct pq_schema_el {
    char *name; /* NUL-terminated copy (a name may hold NULs: name_len) */
    size_t name_len;
    int type;         /* physical type, -1 for a group */
    int type_length;  /* FIXED_LEN_BYTE_ARRAY width */
    int repetition;   /* PQ_REQUIRED.., -1 when absent (the root) */
    int num_children; /* 0 for a leaf */
    int converted;    /* PQ_CT_*, -1 when absent */
    int scale, precision;
    int logical; /* PQ_LT_* */
    int lt_unit; /* TIME, TIMESTAMP: PQ_UNIT_* */
    int lt_utc;  /* TIME, TIMESTAMP: isAdjustedToUTC */
    int lt_bits, lt_signed;
} pq_schema_el;

typedef struct pq_chunk {
    int type, codec;
    int64_t num_values;
    int64_t total_compressed, total_uncompressed;
    int64_t data_page_offset, dictionary_page_offset; /* dictionary: -1 when absent */
    int has_meta;                                     /* ColumnMetaData present (absent when encrypted) */
    int external;                                     /* file_path set: the chunk is in another file */
    int encrypted;                                    /* crypto_metadata set */
    int path_len;                                     /* path_in_schema elements */
} pq_chunk;

typedef struct pq_rowgroup {
    int64_t num_rows;
    int ncols;
    pq_chunk *cols;
} pq_rowgroup;

typedef struct pq_kv {
    char *key, *value;
    size_t value_len;
} pq_kv;

typedef struct pq_meta {
    int nschema;
    pq_schema_el *schema;
    int64_t num_rows;
    int nrg;
    pq_rowgroup *rgs;
    int nkv;
    pq_kv *kv;
    char *created_by;
    int encrypted; /* encryption_algorithm set (plaintext footer of an encrypted file) */
} pq_meta;

/* Decodes a FileMetaData. err: "offset N: what" (the caller adds the file). */
int pq_meta_decode(const uint8_t *p, size_t n, pq_meta *m, sl_err *err);
void pq_meta_free(pq_meta *m);

typedef struct pq_page_header {
    int type;
    int32_t uncompressed, compressed;
    /* data page v1 and v2 */
    int32_t num_values, encoding;
    int32_t def_encoding, rep_encoding; /* v1 */
    int32_t num_nulls, num_rows;        /* v2 */
    int32_t def_len, rep_len;           /* v2: level bytes (never compressed) */
    int is_compressed;                  /* v2, default 1 */
    int has_data, has_v2, has_dict;
    /* dictionary page */
    int32_t dict_num_values, dict_encoding;
} pq_page_header;

/* Decodes a PageHeader at p[0, n): 0 with *used its length, 1 when more
 * bytes are needed (n too short to hold it), -1 when corrupt (err set). */
int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header *h, size_t *used, sl_err *err);

const char *pq_codec_name(int codec);
const char *pq_encoding_name(int enc);
const char *pq_type_name(int type);

#endif
