// A hand-written scanner (no regex): one pass over the bytes, a token per word or sign.
#include "oomlab/data/tokenizer.h"

#include <array>

namespace oomlab {
namespace {

enum class Kind { Space, Skip, Word, Apostrophe, Sign };

struct Unit {
    Kind kind = Kind::Skip;
    std::size_t length = 1;          // bytes
    std::string_view spelling = {};  // what a sign is written as, when not its own bytes
};

// The clitics GloVe's tokenizer splits off ("it's" -> "it", "'s"); "n't" is handled apart.
constexpr std::array<std::string_view, 6> kClitics = {"s", "re", "ve", "ll", "d", "m"};

bool is_ascii_alnum(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// U+2000..U+203F (E2 80 xx): spaces, dashes, curly quotes and the ellipsis. Curly quotes
// become ASCII ones so that they meet GloVe's words.
Unit general_punctuation(unsigned char third) {
    if (third <= 0x8B) {
        return {Kind::Space, 3};
    }
    switch (third) {
        case 0x98:
            return {Kind::Sign, 3, "'"};
        case 0x99:
            return {Kind::Apostrophe, 3};
        case 0x9C:
        case 0x9D:
            return {Kind::Sign, 3, "\""};
        case 0xA6:
            return {Kind::Sign, 3, "..."};
        default:
            return {Kind::Sign, 3};
    }
}

Unit classify(std::string_view text, std::size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
        return {Kind::Space};
    }
    if (c < 0x20 || c == 0x7F) {
        return {Kind::Skip};
    }
    if (is_ascii_alnum(c)) {
        return {Kind::Word};
    }
    if (c == '\'') {
        return {Kind::Apostrophe};
    }
    if (c < 0x80) {
        return {Kind::Sign};
    }
    if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80) {
        return general_punctuation(static_cast<unsigned char>(text[i + 2]));
    }
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xA0) {
        return {Kind::Space, 2};  // no-break space
    }
    // Any other non-ASCII byte is part of a word: multibyte letters stay whole.
    return {Kind::Word};
}

class Scanner {
public:
    Scanner(std::string_view text, bool cased, std::vector<std::string>& out)
        : m_text(text), m_cased(cased), m_out(out) {}

    void run() {
        std::size_t i = 0;
        while (i < m_text.size()) {
            const Unit unit = classify(m_text, i);
            switch (unit.kind) {
                case Kind::Space:
                case Kind::Skip:
                    i += unit.length;
                    break;
                case Kind::Word:
                    i = word(i);
                    break;
                case Kind::Apostrophe:
                    i = apostrophe(i, unit);
                    break;
                case Kind::Sign:
                    i = sign(i, unit);
                    break;
            }
        }
    }

private:
    void emit(std::string token) {
        if (!token.empty()) {
            m_out.push_back(std::move(token));
        }
    }

    void append(std::string& token, std::string_view bytes) const {
        for (const char c : bytes) {
            token += m_cased ? c : lower(c);
        }
    }

    // The run of word bytes starting at `i`.
    std::string_view word_run(std::size_t i) const {
        std::size_t end = i;
        while (end < m_text.size() && classify(m_text, end).kind == Kind::Word) {
            ++end;
        }
        return m_text.substr(i, end - i);
    }

    static bool is_clitic(const std::string& lower_suffix) {
        for (std::string_view clitic : kClitics) {
            if (lower_suffix == clitic) {
                return true;
            }
        }
        return false;
    }

    std::size_t word(std::size_t i) {
        std::string token;
        while (true) {
            const std::string_view run = word_run(i);
            append(token, run);
            i += run.size();
            if (i + 1 < m_text.size() && (m_text[i] == '.' || m_text[i] == ',') &&
                is_digit(token.back()) && is_digit(m_text[i + 1])) {
                token += m_text[i++];  // 1,000 and 3.14 stay whole
                continue;
            }
            if (i >= m_text.size() || classify(m_text, i).kind != Kind::Apostrophe) {
                break;
            }
            const std::size_t after = i + classify(m_text, i).length;
            const std::string_view suffix = word_run(after);
            if (suffix.empty()) {
                break;  // a closing quote: the main loop emits it
            }
            std::string lower_suffix;
            for (const char c : suffix) {
                lower_suffix += lower(c);
            }
            if (lower_suffix == "t" && lower(token.back()) == 'n') {
                std::string negation(1, token.back());
                token.pop_back();
                emit(std::move(token));
                negation += '\'';
                append(negation, suffix);
                emit(std::move(negation));
                return after + suffix.size();
            }
            if (is_clitic(lower_suffix)) {
                emit(std::move(token));
                std::string clitic = "'";
                append(clitic, suffix);
                emit(std::move(clitic));
                return after + suffix.size();
            }
            token += '\'';  // o'clock, rock'n'roll: one word
            i = after;
        }
        emit(std::move(token));
        return i;
    }

    // An apostrophe not inside a word: "'s" of pre-tokenized text, "''" closing quotes, or
    // a lone quote.
    std::size_t apostrophe(std::size_t i, const Unit& unit) {
        const std::size_t after = i + unit.length;
        if (after < m_text.size() && m_text[i] == '\'' && m_text[after] == '\'') {
            emit("''");
            return after + 1;
        }
        const std::string_view suffix = word_run(after);
        std::string lower_suffix;
        for (const char c : suffix) {
            lower_suffix += lower(c);
        }
        if (is_clitic(lower_suffix)) {
            std::string clitic = "'";
            append(clitic, suffix);
            emit(std::move(clitic));
            return after + suffix.size();
        }
        emit("'");
        return after;
    }

    std::size_t sign(std::size_t i, const Unit& unit) {
        const char c = m_text[i];
        const auto run_end = [&](std::size_t from) {
            while (from < m_text.size() && m_text[from] == c) {
                ++from;
            }
            return from;
        };
        if (c == '.' && run_end(i) - i >= 3) {
            emit("...");
            return run_end(i);
        }
        if ((c == '-' || c == '`') && run_end(i) - i >= 2) {
            emit(std::string(2, c));  // "--" and "``" as GloVe's tokenizer writes them
            return run_end(i);
        }
        emit(std::string(unit.spelling.empty() ? m_text.substr(i, unit.length) : unit.spelling));
        return i + unit.length;
    }

    std::string_view m_text;
    bool m_cased;
    std::vector<std::string>& m_out;
};

}  // namespace

void tokenize(std::string_view text, const TokenizerOptions& options,
              std::vector<std::string>& out) {
    out.clear();
    Scanner(text, options.cased, out).run();
}

std::vector<std::string> tokenize(std::string_view text, const TokenizerOptions& options) {
    std::vector<std::string> tokens;
    tokenize(text, options, tokens);
    return tokens;
}

}  // namespace oomlab
