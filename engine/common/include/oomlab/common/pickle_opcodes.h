// The opcodes of Python's pickle protocol that plain data uses (protocols 2 to 5; Python's
// Lib/pickletools.py documents each one), shared by the engine's snapshot writer and the
// reader of PyTorch's snapshots. Header-only.
#pragma once

namespace oomlab::pickle {

enum Op : unsigned char {
    kProto = 0x80,
    kFrame = 0x95,
    kStop = '.',
    kMark = '(',
    kPop = '0',
    kPopMark = '1',
    kNone = 'N',
    kNewTrue = 0x88,
    kNewFalse = 0x89,
    kBinInt = 'J',
    kBinInt1 = 'K',
    kBinInt2 = 'M',
    kLong1 = 0x8a,
    kLong4 = 0x8b,
    kBinFloat = 'G',
    kShortBinUnicode = 0x8c,
    kBinUnicode = 'X',
    kBinUnicode8 = 0x8d,
    kEmptyList = ']',
    kAppend = 'a',
    kAppends = 'e',
    kList = 'l',
    kEmptyTuple = ')',
    kTuple = 't',
    kTuple1 = 0x85,
    kTuple2 = 0x86,
    kTuple3 = 0x87,
    kEmptyDict = '}',
    kDict = 'd',
    kSetItem = 's',
    kSetItems = 'u',
    kBinPut = 'q',
    kLongBinPut = 'r',
    kMemoize = 0x94,
    kBinGet = 'h',
    kLongBinGet = 'j',
};

}  // namespace oomlab::pickle
