#include "oomlab/lessons/lesson_prediction.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab {
namespace {

using Json = nlohmann::json;

constexpr const char* kBands[] = {"under-1.5x", "1.5x-3x", "over-3x"};
constexpr const char* kFreeMemory[] = {"full", "pieces"};

// Whether every run of the lesson is meant to finish (no claim says one ends otherwise).
bool every_run_meant_to_finish(const Lesson& lesson) {
    return std::none_of(lesson.claims.begin(), lesson.claims.end(), [](const LessonClaim& claim) {
        return claim.kind == LessonClaim::Kind::Status && claim.status != RunStatus::Completed;
    });
}

std::string run_text(const LessonAsks& asks, int run) {
    const bool most = asks.question == LessonQuestion::MostMemory;
    if (run >= 0 && std::size_t(run) < asks.labels.size()) {
        return most ? asks.labels[std::size_t(run)] + " needs the most"
                    : "only " + asks.labels[std::size_t(run)] + " completes";
    }
    switch (run) {
        case LessonAnswer::kAboutTheSame:
            return "they need about the same";
        case LessonAnswer::kEveryRun:
            return "every run completes";
        case LessonAnswer::kNoRun:
            return "none completes";
        default:
            return "no answer";
    }
}

std::string second_text(const LessonAsks& asks, int second) {
    if (asks.question == LessonQuestion::MostMemory) {
        constexpr const char* kText[] = {"less than 1.5 times the least",
                                         "1.5 to 3 times the least", "more than 3 times the least"};
        return second >= 0 && second < 3 ? kText[second] : "";
    }
    constexpr const char* kText[] = {"the free memory: less than asked for",
                                     "the free memory: more than asked for, in pieces too small"};
    return second >= 0 && second < 2 ? kText[second] : "";
}

}  // namespace

LessonAsks lesson_asks(const Lesson& lesson) {
    LessonAsks asks;
    asks.question = every_run_meant_to_finish(lesson) ? LessonQuestion::MostMemory
                                                      : LessonQuestion::WhichCompletes;
    asks.free_memory =
        asks.question == LessonQuestion::WhichCompletes &&
        std::any_of(lesson.claims.begin(), lesson.claims.end(),
                    [](const LessonClaim& claim) { return claim.fragmented.has_value(); });
    for (const LessonRun& run : lesson.runs) {
        asks.labels.push_back(run.label);
    }
    return asks;
}

int ratio_band(double ratio) {
    return ratio < 1.5 ? 0 : (ratio <= 3.0 ? 1 : 2);
}

LessonAnswer measured_answer(const LessonAsks& asks, const std::vector<LessonRunFacts>& runs,
                             double* ratio) {
    LessonAnswer answer;
    if (runs.size() != asks.labels.size() || runs.empty()) {
        return answer;
    }
    if (asks.question == LessonQuestion::MostMemory) {
        const auto by_peak = [](const LessonRunFacts& a, const LessonRunFacts& b) {
            return a.peak_bytes < b.peak_bytes;
        };
        const auto most = std::max_element(runs.begin(), runs.end(), by_peak);
        const auto least = std::min_element(runs.begin(), runs.end(), by_peak);
        const double measured =
            least->peak_bytes > 0 ? double(most->peak_bytes) / double(least->peak_bytes) : 0;
        if (ratio) {
            *ratio = measured;
        }
        answer.run = measured < 1.5 ? LessonAnswer::kAboutTheSame : int(most - runs.begin());
        answer.second = ratio_band(measured);
        return answer;
    }
    std::size_t completed = 0;
    bool fragmented = false;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].status == RunStatus::Completed) {
            answer.run = ++completed == 1 ? int(i) : LessonAnswer::kNotChosen;
        } else {
            fragmented = fragmented || runs[i].fragmented;
        }
    }
    if (completed == runs.size()) {
        answer.run = LessonAnswer::kEveryRun;
    } else if (completed == 0) {
        answer.run = LessonAnswer::kNoRun;
    }
    if (asks.free_memory && completed < runs.size()) {
        answer.second = fragmented ? 1 : 0;
    }
    return answer;
}

std::string answer_text(const LessonAsks& asks, const LessonAnswer& answer) {
    std::string text = run_text(asks, answer.run);
    const std::string second = second_text(asks, answer.second);
    if (!second.empty()) {
        text += (asks.question == LessonQuestion::MostMemory ? ", " : "; ") + second;
    }
    return text;
}

LessonAnswer parse_answer(const LessonAsks& asks, const std::string& text,
                          const std::string& option) {
    const bool most = asks.question == LessonQuestion::MostMemory;
    std::string run = text;
    std::string second;
    if (asks.second()) {
        const std::size_t comma = text.rfind(',');
        run = comma == std::string::npos ? text : text.substr(0, comma);
        second = comma == std::string::npos ? "" : text.substr(comma + 1);
    }
    std::string runs = most ? "\"same\"" : "\"every\", \"none\"";
    LessonAnswer answer;
    for (std::size_t i = 0; i < asks.labels.size(); ++i) {
        runs += ", \"" + asks.labels[i] + "\"";
        if (run == asks.labels[i]) {
            answer.run = int(i);
        }
    }
    if (most && run == "same") {
        answer.run = LessonAnswer::kAboutTheSame;
    } else if (!most && run == "every") {
        answer.run = LessonAnswer::kEveryRun;
    } else if (!most && run == "none") {
        answer.run = LessonAnswer::kNoRun;
    }
    if (answer.run == LessonAnswer::kNotChosen) {
        throw BadInput(option + " " + quoted_excerpt(text) + ": the run " + quoted_excerpt(run) +
                       " is not one of the lesson's answers; give one of " + runs);
    }
    if (!asks.second()) {
        return answer;
    }
    const auto& choices =
        most ? std::vector<std::string>(std::begin(kBands), std::end(kBands))
             : std::vector<std::string>(std::begin(kFreeMemory), std::end(kFreeMemory));
    const auto found = std::find(choices.begin(), choices.end(), second);
    if (found == choices.end()) {
        std::string listed;
        for (const std::string& choice : choices) {
            listed += (listed.empty() ? "" : ", ") + choice;
        }
        throw BadInput(option + " " + quoted_excerpt(text) + ": after a comma, " +
                       (most ? "how much more the run needs than the least"
                             : "how the free memory lies at an out-of-memory") +
                       ": one of " + listed + " (e.g. \"" + asks.labels.front() + "," + choices[1] +
                       "\")");
    }
    answer.second = int(found - choices.begin());
    return answer;
}

std::map<std::string, std::string> lesson_tags(const Lesson& lesson, std::size_t run,
                                               const LessonAnswer& predicted) {
    const LessonAsks asks = lesson_asks(lesson);
    const Json prediction = {
        {"question",
         asks.question == LessonQuestion::MostMemory ? "most_memory" : "which_completes"},
        {"free_memory", asks.free_memory},
        {"labels", asks.labels},
        {"run", predicted.run},
        {"second", predicted.second}};
    return {{"oomlab.lesson", lesson.name},
            {"oomlab.lesson_run", std::to_string(run)},
            {"oomlab.prediction", prediction.dump()}};
}

std::optional<TaggedPrediction> tagged_prediction(const std::map<std::string, std::string>& tags) {
    const auto lesson = tags.find("oomlab.lesson");
    const auto run = tags.find("oomlab.lesson_run");
    const auto prediction = tags.find("oomlab.prediction");
    if (lesson == tags.end() || run == tags.end() || prediction == tags.end()) {
        return std::nullopt;
    }
    try {
        const Json json = Json::parse(prediction->second);
        TaggedPrediction tagged;
        tagged.lesson = lesson->second;
        tagged.run = std::stoul(run->second);
        tagged.asks.question = json.at("question").get<std::string>() == "most_memory"
                                   ? LessonQuestion::MostMemory
                                   : LessonQuestion::WhichCompletes;
        tagged.asks.free_memory = json.at("free_memory").get<bool>();
        tagged.asks.labels = json.at("labels").get<std::vector<std::string>>();
        tagged.predicted.run = json.at("run").get<int>();
        tagged.predicted.second = json.at("second").get<int>();
        if (tagged.run >= tagged.asks.labels.size()) {
            return std::nullopt;
        }
        return tagged;
    } catch (const std::exception&) {
        return std::nullopt;  // written by no version of OOM Lab: not a prediction
    }
}

}  // namespace oomlab
