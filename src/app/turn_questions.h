// The question sets of `hotline asr train-turns` and `hotline eval turns`, with their splits:
// Banking77 (train.csv / test.csv), CLINC150 (data_full.json: train / test), and the Bitext
// customer-support questions split as `hotline train` splits them (train::BuildSupportData: a
// hash of the normalized question, 10 % held out). Training and tuning use only the train
// splits; reports use only the test splits.
//
// Header-only: both commands are compiled into the executable (app/CMakeLists.txt globs cmd_*.cc).
#pragma once

#include <string>
#include <vector>

#include "answer/eval/eval_data.h"
#include "common/status.h"
#include "train/support_data.h"

namespace hotline::cli::turns {

struct QuestionSet {
  std::string name;  // "banking77", "clinc150", "bitext"
  std::vector<std::string> train;
  std::vector<std::string> test;
};

// Loads the three sets from the shared data folder (`data_dir`, e.g. ../shared/data).
inline Result<std::vector<QuestionSet>> LoadQuestionSets(const std::string& data_dir) {
  std::vector<QuestionSet> sets;
  auto texts = [](const std::vector<answer::LabelledText>& v) {
    std::vector<std::string> out;
    out.reserve(v.size());
    for (const auto& t : v) out.push_back(t.text);
    return out;
  };
  {
    QuestionSet s{"banking77", {}, {}};
    ASSIGN_OR_RETURN(auto train,
                     answer::LoadLabelledTexts(data_dir + "/intent/banking77/train.csv", ""));
    ASSIGN_OR_RETURN(auto test,
                     answer::LoadLabelledTexts(data_dir + "/intent/banking77/test.csv", ""));
    s.train = texts(train);
    s.test = texts(test);
    sets.push_back(std::move(s));
  }
  {
    QuestionSet s{"clinc150", {}, {}};
    const std::string path = data_dir + "/intent/clinc150/data_full.json";
    ASSIGN_OR_RETURN(auto train, answer::LoadLabelledTexts(path, "train"));
    ASSIGN_OR_RETURN(auto test, answer::LoadLabelledTexts(path, "test"));
    s.train = texts(train);
    s.test = texts(test);
    sets.push_back(std::move(s));
  }
  {
    QuestionSet s{"bitext", {}, {}};
    ASSIGN_OR_RETURN(std::string csv,
                     train::ReadTextFile(data_dir + "/support/bitext/customer_support.csv"));
    ASSIGN_OR_RETURN(train::SupportData data, train::BuildSupportData(csv, {}));
    for (const auto& e : data.train) s.train.push_back(e.question);
    for (const auto& e : data.test) s.test.push_back(e.question);
    sets.push_back(std::move(s));
  }
  return sets;
}

}  // namespace hotline::cli::turns
