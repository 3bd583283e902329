"""Parameter studies: many backtests of one strategy revision, their parameters drawn by
Optuna from a declared search space (:mod:`spine.studies.space`) and asked and told one trial
at a time (:mod:`spine.studies.driver`), scored by a statistic of each trial's report on a
training window, a holdout after it kept out of the selection (:mod:`spine.studies.objective`)."""
