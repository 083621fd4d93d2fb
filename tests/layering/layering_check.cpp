#include "layering_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace oomlab::test {
namespace {

namespace fs = std::filesystem;

struct Unit {
    std::string name;
    std::string folder;  // relative to the root: engine/store, ui/plots, app/cli
    bool torch = false;  // links LibTorch itself
    bool qt = false;
    std::vector<std::string> declared;   // the units it links
    std::vector<std::string> passed_on;  // the units it passes on to those that link it
};

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> result;
    for (std::string word; in >> word;) {
        result.push_back(word);
    }
    return result;
}

// "a | b c | d" as its three parts' words.
std::vector<std::vector<std::string>> fields(const std::string& line) {
    std::vector<std::vector<std::string>> result(1);
    for (const std::string& word : words(line)) {
        if (word == "|") {
            result.emplace_back();
        } else {
            result.back().push_back(word);
        }
    }
    return result;
}

class Layering {
public:
    Layering(const std::string& manifest, std::string root) : m_root(std::move(root)) {
        std::istringstream in(manifest);
        std::vector<std::pair<std::string, std::vector<std::string>>> ui_folders;
        for (std::string line; std::getline(in, line);) {
            const auto parts = fields(line);
            if (parts[0].size() == 5 && parts[0][0] == "unit" && parts.size() == 3) {
                Unit unit{parts[0][1],        parts[0][2], parts[0][3] == "1",
                          parts[0][4] == "1", parts[1],    parts[2]};
                m_units[unit.name] = unit;
            } else if (parts[0].size() == 2 && parts[0][0] == "ui" && parts.size() == 2) {
                ui_folders.emplace_back(parts[0][1], parts[1]);
            }
        }
        // The workbench's folders are units of their own, inside the workbench's target: each
        // links the folders it declares and whatever the workbench links.
        for (const auto& [folder, below] : ui_folders) {
            Unit unit{"ui/" + folder, "ui/" + folder, false, true, {}, {}};
            for (const std::string& other : below) {
                unit.declared.push_back("ui/" + other);
            }
            m_ui_folders.push_back(unit.name);
            m_units[unit.name] = unit;
        }
        for (auto& [name, unit] : m_units) {
            if (unit.folder == "ui") {
                unit.passed_on.insert(unit.passed_on.end(), m_ui_folders.begin(),
                                      m_ui_folders.end());
            }
            if (unit.folder.rfind("engine/", 0) == 0) {
                m_engine_folders[unit.folder.substr(7)] = name;
            }
        }
        for (const std::string& folder : m_ui_folders) {
            Unit& unit = m_units[folder];
            for (const auto& [name, other] : m_units) {
                if (other.folder == "ui") {
                    unit.declared.insert(unit.declared.end(), other.declared.begin(),
                                         other.declared.end());
                }
            }
        }
    }

    std::vector<std::string> violations() {
        for (const auto& [name, unit] : m_units) {
            if (unit.folder == "ui") {
                continue;  // its folders are checked one by one
            }
            check_folder(unit, unit.folder);
        }
        check_ui_cycles();
        return m_violations;
    }

private:
    // What `name` may include: what it links, and what those pass on, onwards.
    std::set<std::string> reachable(const std::string& name) const {
        std::set<std::string> seen;
        std::vector<std::string> next = m_units.at(name).declared;
        while (!next.empty()) {
            const std::string current = next.back();
            next.pop_back();
            if (!seen.insert(current).second || !m_units.count(current)) {
                continue;
            }
            const Unit& unit = m_units.at(current);
            next.insert(next.end(), unit.passed_on.begin(), unit.passed_on.end());
        }
        return seen;
    }

    bool links_qt(const Unit& unit) const {
        if (unit.qt) {
            return true;
        }
        const std::set<std::string> linked = reachable(unit.name);
        return std::any_of(linked.begin(), linked.end(), [&](const std::string& name) {
            return m_units.count(name) && m_units.at(name).qt;
        });
    }

    void check_folder(const Unit& unit, const std::string& folder) {
        const fs::path path = fs::path(m_root) / folder;
        if (!fs::is_directory(path)) {
            return;
        }
        std::vector<fs::path> files;
        for (const auto& entry : fs::recursive_directory_iterator(path)) {
            const std::string extension = entry.path().extension().string();
            if (entry.is_regular_file() && (extension == ".h" || extension == ".cpp")) {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            // The headers other components may include: <folder>/include/oomlab/<folder>/.
            const bool public_header =
                file.parent_path().parent_path().filename() == "oomlab" &&
                file.parent_path().parent_path().parent_path().filename() == "include";
            check_file(unit, file, public_header);
        }
    }

    void check_file(const Unit& unit, const fs::path& file, bool public_header) {
        static const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
        const std::string where = fs::relative(file, m_root).string();
        std::ifstream in(file);
        for (std::string line; std::getline(in, line);) {
            std::smatch match;
            if (!std::regex_search(line, match, include)) {
                continue;
            }
            const std::string header = match[2];
            if (match[1] == "<") {
                check_system_header(unit, where, header);
            } else {
                check_own_header(unit, file, header, public_header);
            }
        }
    }

    void check_system_header(const Unit& unit, const std::string& where,
                             const std::string& header) {
        static const std::regex torch(R"(^(torch|ATen|c10|caffe2)/)");
        static const std::regex qt(R"(^(Q[A-Z][A-Za-z]*|QtTest|qcustomplot\.h)$)");
        if (std::regex_search(header, torch) && !unit.torch) {
            add(where, header, unit.name + " does not link LibTorch (oomlab_torch_component)");
        } else if (std::regex_search(header, qt) && !links_qt(unit)) {
            add(where, header, unit.name + " does not link Qt");
        }
    }

    void check_own_header(const Unit& unit, const fs::path& file, const std::string& header,
                          bool public_header) {
        const std::string where = fs::relative(file, m_root).string();
        if (header.find("..") != std::string::npos) {
            add(where, header, "a path out of its folder: include the component's oomlab/ header");
            return;
        }
        const std::size_t slash = header.find('/');
        if (slash == std::string::npos) {
            if (public_header && !fs::exists(file.parent_path() / header)) {
                add(where, header,
                    "a private header in a public header: move it into include/oomlab/ too");
            }
            return;  // beside the including file
        }
        const std::string first = header.substr(0, slash);
        std::string owner;
        if (first == "oomlab") {
            const std::size_t next = header.find('/', slash + 1);
            const std::string folder = header.substr(slash + 1, next - slash - 1);
            owner = m_engine_folders.count(folder) ? m_engine_folders.at(folder) : "";
        } else if (m_units.count("ui/" + first) &&
                   (unit.folder.rfind("ui/", 0) == 0 || unit.folder == "app/gui")) {
            owner = "ui/" + first;
        } else if (m_engine_folders.count(first)) {
            add(where, header,
                "a path into an engine folder: a component's private headers are included "
                "beside their sources, other components' by their oomlab/ header");
            return;
        }
        if (!owner.empty() && owner != unit.name && !reachable(unit.name).count(owner)) {
            add(where, header,
                "of " + owner + ", which " + unit.name + " does not link (declare it in " +
                    declared_in(unit) + ")");
        }
    }

    static std::string declared_in(const Unit& unit) {
        if (unit.folder.rfind("engine/", 0) == 0) {
            return unit.folder + "/CMakeLists.txt";
        }
        return unit.folder.substr(0, unit.folder.find('/')) + "/CMakeLists.txt";
    }

    // A cycle among the workbench's declared folders: depth-first, reporting the first.
    void check_ui_cycles() {
        std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
        std::vector<std::string> path;
        std::function<bool(const std::string&)> visit = [&](const std::string& name) {
            state[name] = 1;
            path.push_back(name);
            for (const std::string& next : m_units.at(name).declared) {
                if (next.rfind("ui/", 0) != 0 || !m_units.count(next)) {
                    continue;
                }
                if (state[next] == 1) {
                    std::string cycle;
                    for (auto it = std::find(path.begin(), path.end(), next); it != path.end();
                         ++it) {
                        cycle += *it + " -> ";
                    }
                    m_violations.push_back("ui/CMakeLists.txt: the folders form a cycle: " + cycle +
                                           next);
                    return true;
                }
                if (state[next] == 0 && visit(next)) {
                    return true;
                }
            }
            state[name] = 2;
            path.pop_back();
            return false;
        };
        for (const std::string& folder : m_ui_folders) {
            if (state[folder] == 0 && visit(folder)) {
                return;
            }
        }
    }

    void add(const std::string& where, const std::string& header, const std::string& why) {
        m_violations.push_back(where + ": includes \"" + header + "\", " + why);
    }

    std::string m_root;
    std::map<std::string, Unit> m_units;
    std::map<std::string, std::string> m_engine_folders;  // "store" -> oomlab_store
    std::vector<std::string> m_ui_folders;
    std::vector<std::string> m_violations;
};

}  // namespace

std::vector<std::string> layering_violations(const std::string& manifest_text,
                                             const std::string& root) {
    return Layering(manifest_text, root).violations();
}

}  // namespace oomlab::test
