package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"mqsim/scenarios"
	"mqsim/scenarios/quiz"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/tui"
)

func init() { moreCommands = append(moreCommands, newQuizCmd, newProgressCmd) }

func newQuizCmd() *cobra.Command {
	var path string
	var fix, noProgress, plain, presenter, noColor bool
	var set []string
	cmd := &cobra.Command{
		Use:   "quiz [NAME|FILE] [--path interview|course]",
		Short: "Predict a scenario's outcome: the run stops at each question and then shows the answer",
		Long: `Play a scenario (a catalogue name or a file) as a quiz: the run goes to each question
the scenario asks ("# ask:" lines), stops before the answer shows and reads your answer
from standard input, one per line (a choice as written, or its letter); once the run reaches
the point that decides it, the quiz says right or wrong, the run's answer, the step that
decided it and why. Every answer is computed from the run, never typed by the author, so
--fix or --set asks the same questions of the changed run: the second answer is the lesson.

In a terminal the quiz runs in the TUI (mqsim tui's panes, with the question above them:
a letter picks, enter goes on; --presenter asks the room and reveals each answer on a
key); --plain, or standard input or output that is not a terminal, gives the plain mode.

--path interview quizzes every catalogue scenario with questions on the interview path of
notes/README.md, in the path's order; --path course, those with questions that the labs
of its "A course in four lectures" run, in lecture order. Your answers count per concept
in the progress file (mqsim/progress.json in your config directory) unless
--no-progress; 'mqsim progress' shows it.`,
		Example: "  mqsim quiz acks1-leader-crash\n  mqsim quiz acks1-leader-crash --fix\n  mqsim quiz --path interview\n  mqsim quiz --path course\n  printf 'a\\nb2\\nyes\\n2\\n' | mqsim quiz acks1-leader-crash",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			scripts, err := quizScripts(args, path)
			if err != nil {
				return err
			}
			var progress *quiz.Progress
			var file string
			if !noProgress {
				if file, err = quiz.ProgressFile(); err != nil {
					return err
				}
				if progress, err = quiz.LoadProgress(file); err != nil {
					return err
				}
			}
			in := bufio.NewReader(cmd.InOrStdin())
			out := cmd.OutOrStdout()
			inFile, _ := cmd.InOrStdin().(*os.File)
			useTUI := !plain && inFile != nil && isTerminal(inFile) && isTerminal(out)
			right, total := 0, 0
			for n, s := range scripts {
				opts := runner.Options{Set: set}
				if fix {
					if len(s.Fix) == 0 {
						return fmt.Errorf("%s names no fix (no \"fix:\" line in its narration)", s.Name)
					}
					opts.Set = append(slices.Clone(s.Fix), set...)
				}
				sess, err := quiz.New(s, opts) // checks the script and that it asks questions
				if err != nil {
					return err
				}
				var results []quiz.Result
				var qerr error
				if useTUI {
					results, qerr = quizTUI(s, opts, tui.Options{Presenter: presenter, NoColor: noColor || os.Getenv("NO_COLOR") != ""})
				} else {
					if n > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprintf(out, "=== quiz: %s (%d questions) ===\n", s.Name, len(s.Questions))
					results, qerr = quiz.Plain(sess, in, out)
				}
				for _, r := range results {
					total++
					if r.Right {
						right++
					}
					if progress != nil {
						progress.Record(r.Question.Concept, r.Right)
					}
				}
				if progress != nil && len(results) > 0 {
					if err := progress.Save(file); err != nil {
						return fmt.Errorf("saving progress: %w", err)
					}
				}
				if qerr != nil {
					return qerr
				}
			}
			if !useTUI {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "score: %d of %d right\n", right, total)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "path", "", "quiz every scenario with questions on this path: interview (the refresher's concepts) or course (the lectures' labs)")
	cmd.Flags().BoolVar(&fix, "fix", false, "apply the settings the scenario names as its fix: the same questions, the fixed run's answers")
	cmd.Flags().StringArrayVar(&set, "set", nil, "override a cluster setting, KEY=VALUE, or a client's, NAME.KEY=VALUE (repeatable)")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "do not count the answers in the progress file")
	cmd.Flags().BoolVar(&plain, "plain", false, "the plain mode even in a terminal: answers read from standard input, one per line")
	cmd.Flags().BoolVar(&presenter, "presenter", false, "in the TUI, ask the room: enter goes on from a question and reveals each answer")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "no colours in the TUI (also when NO_COLOR is set)")
	return cmd
}

// quizTUI plays one scenario's quiz in the TUI and returns the learner's results.
func quizTUI(s *script.Script, opts runner.Options, uiOpts tui.Options) ([]quiz.Result, error) {
	run, err := tui.Record("main", s, opts)
	if err != nil {
		return nil, err
	}
	if run.Err != nil {
		return nil, run.Err
	}
	if run.QuizErr != nil {
		return nil, run.QuizErr
	}
	uiOpts.Quiz = true
	final, err := tea.NewProgram(tui.New(run, uiOpts), tui.ProgramOptions(uiOpts)...).Run()
	if err != nil {
		return nil, err
	}
	var results []quiz.Result
	for _, r := range final.(tui.Model).QuizResults() {
		if r.Given == "" {
			continue // presenter mode, the room's pick not typed: nobody's progress
		}
		results = append(results, quiz.Result{Script: s.Name, Question: r.Question, Given: r.Given, Correct: r.Correct, Right: r.Right})
	}
	return results, nil
}

// quizScripts are the scenarios a quiz plays: the one named, or those of a path.
func quizScripts(args []string, path string) ([]*script.Script, error) {
	switch {
	case path != "" && len(args) > 0:
		return nil, fmt.Errorf("give a scenario or --path, not both")
	case path != "":
		return quiz.Path(path)
	case len(args) == 0:
		return nil, fmt.Errorf("name a scenario (one of %s) or give --path interview or --path course", strings.Join(quiz.Quizzes(), ", "))
	}
	s, err := scenarios.Load(args[0])
	if err != nil {
		return nil, err
	}
	return []*script.Script{s}, nil
}

func newProgressCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "progress",
		Short: "Show which concepts of the interview path your quizzes mastered, missed or left untried",
		Long: `Show, for each concept of the interview path (notes/README.md), whether your last
answer about it in 'mqsim quiz' was right (mastered) or wrong (missed), or whether you
have not answered one yet (untried), from mqsim/progress.json in your config directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := quiz.ProgressFile()
			if err != nil {
				return err
			}
			p, err := quiz.LoadProgress(file)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), p.Report("interview", quiz.InterviewPath))
			return nil
		},
	}
}
