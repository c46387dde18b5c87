(* The coupling form of the optimal acceptance, the dual (star) -- weak and strong
   duality -- and the K-draft condition.

   Drafts are outcomes x of any finite type X (ordered k-tuples of tokens, or any
   richer draft record) with law D; each outcome carries its set of drafted
   tokens [draft x] (set(x-bar) in docs/theory.md).  A verifier is a coupling
   pi of D and the target law p (docs/theory.md section 2); its acceptance is
   P(Y in set(x-bar)).  The dual (star) of docs/theory.md, Theorem 2.2, reads
     alpha*(p, D) = max over couplings pi of P(Y in set(x-bar))
                  = min over S of  p(S) + 1 - D(set(x-bar) \subset S).
   This file proves the inequality <= for every coupling and every S (weak
   duality, [weak_duality]), equality for every finite token type, every draft
   law and every k (strong duality, [strong_duality_star], from Gale's
   supply-demand theorem, Gale.v, on the network draft outcomes -> tokens), and
   the K-draft condition of Theorem 4.1 in both directions ([kdraft_condition]). *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Gale.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Duality.

Variables (R : realFieldType) (T X : finType).
Variables (p : T -> R) (D : X -> R) (draft : X -> {set T}).
Hypotheses (p_ge0 : forall y, 0 <= p y) (p_sum1 : \sum_y p y = 1).
Hypotheses (D_ge0 : forall x, 0 <= D x) (D_sum1 : \sum_x D x = 1).

(* pi is a coupling of the draft law D and the target law p *)
Definition is_coupling (pi : X -> T -> R) :=
  [/\ forall x y, 0 <= pi x y,
      forall x, \sum_y pi x y = D x
    & forall y, \sum_x pi x y = p y].

(* P(Y in set(x-bar)) under pi *)
Definition acceptance (pi : X -> T -> R) := \sum_x \sum_(y in draft x) pi x y.

Definition pmass (S : {set T}) := \sum_(y in S) p y.

(* D(set(x-bar) \subset S) *)
Definition Dsub (S : {set T}) := \sum_(x | draft x \subset S) D x.

(* the value of S in (star) *)
Definition cut (S : {set T}) := pmass S + 1 - Dsub S.

Lemma cutE S : cut S = pmass S + \sum_(x | ~~ (draft x \subset S)) D x.
Proof.
rewrite /cut /Dsub -D_sum1 (bigID (fun x => draft x \subset S)) /=.
set a := \sum_(x | _) D x; set b := \sum_(x | _) D x.
by rewrite (addrC a) addrA addrK.
Qed.

(* weak duality of (star).  For every coupling of the drafts and the
   output and every token set S, P(Y in set(x-bar)) <= p(S) + 1 - D(set \subset S). *)
Theorem weak_duality pi S : is_coupling pi -> acceptance pi <= cut S.
Proof.
case=> pi_ge0 rowE colE.
have splitE : acceptance pi =
    \sum_x \sum_(y in draft x | y \in S) pi x y
  + \sum_x \sum_(y in draft x | y \notin S) pi x y.
  rewrite /acceptance -big_split /=; apply: eq_bigr => x _.
  exact: (bigID (fun y => y \in S)).
rewrite splitE cutE; apply: ler_add.
  have -> : pmass S = \sum_x \sum_(y in S) pi x y.
    by rewrite exchange_big /=; apply: eq_bigr => y _; rewrite colE.
  apply: ler_sum => x _.
  rewrite [X in X <= _]big_mkcond [X in _ <= X]big_mkcond /=.
  apply: ler_sum => y _.
  by case: (y \in draft x); case: (y \in S); rewrite ?lexx ?pi_ge0.
rewrite [X in _ <= X]big_mkcond /=; apply: ler_sum => x _.
case: ifP => hsub.
  rewrite -rowE [X in X <= _]big_mkcond /=; apply: ler_sum => y _.
  by case: ifP; rewrite ?lexx ?pi_ge0.
rewrite big_pred0 // => y.
move/negbFE/subsetP: hsub => hsub.
by apply/negbTE; case: (boolP (y \in draft x)) => //= /hsub ->.
Qed.

Lemma acceptance_le1 pi : is_coupling pi -> acceptance pi <= 1.
Proof.
move=> hpi; have := weak_duality setT hpi.
suff -> : cut setT = 1 by [].
rewrite cutE big_pred0 ?addr0 => [|x]; last by rewrite subsetT.
by rewrite /pmass -p_sum1; apply: eq_bigl => y; rewrite inE.
Qed.

(* The K-draft condition, necessity: if some lossless verifier always accepts (alpha* = 1),
   then p(S) >= D(set \subset S) for every S. *)
Theorem kdraft_necessary pi :
  is_coupling pi -> acceptance pi = 1 -> forall S, Dsub S <= pmass S.
Proof.
move=> hpi acc1 S; have := weak_duality S hpi.
by rewrite acc1 /cut addrAC ler_addr subr_ge0.
Qed.

Lemma cut_setT : cut setT = 1.
Proof.
rewrite cutE big_pred0 ?addr0 => [|x]; last by rewrite subsetT.
by rewrite /pmass -p_sum1; apply: eq_bigl => y; rewrite inE.
Qed.

(* docs/theory.md, Lemma 2.1 (>=): a sub-coupling g (row sums <= D, column sums
   <= p) extends to a coupling pi >= g: add the product of the row and column
   deficits, normalised by their common total *)
Lemma completion (g : X -> T -> R) :
  (forall x y, 0 <= g x y) -> (forall x, \sum_y g x y <= D x) ->
  (forall y, \sum_x g x y <= p y) ->
  exists2 pi, is_coupling pi & forall x y, g x y <= pi x y.
Proof.
move=> g0 grow gcol.
pose u x := D x - \sum_y g x y; pose v y := p y - \sum_x g x y.
have u0 x : 0 <= u x by rewrite subr_ge0.
have v0 y : 0 <= v y by rewrite subr_ge0.
pose s := \sum_y v y.
have s0 : 0 <= s by rewrite sumr_ge0.
have su : \sum_x u x = s.
  by rewrite /s !sumrB D_sum1 p_sum1 exchange_big.
exists (fun x y => g x y + u x * v y / s); last first.
  by move=> x y; rewrite ler_addl divr_ge0 ?mulr_ge0.
split.
- by move=> x y; rewrite addr_ge0 ?divr_ge0 ?mulr_ge0.
- move=> x; rewrite big_split /= -mulr_suml -mulr_sumr -/s.
  have [s_0|sn0] := eqVneq s 0.
    have : \sum_x u x <= 0 by rewrite su s_0.
    move/(sum_ge0_eq0 u0)=> /(_ x isT) ux.
    rewrite ux !mul0r addr0; apply/eqP; rewrite eq_sym -subr_eq0; exact/eqP.
  by rewrite mulfK // /u addrC subrK.
- move=> y; rewrite big_split /= -!mulr_suml su.
  have [s_0|sn0] := eqVneq s 0.
    have : \sum_y v y <= 0 by rewrite -/s s_0.
    move/(sum_ge0_eq0 v0)=> /(_ y isT) vy.
    rewrite vy mulr0 mul0r addr0; apply/eqP; rewrite eq_sym -subr_eq0; exact/eqP.
  by rewrite mulrAC divff // mul1r /v addrC subrK.
Qed.

(* Strong duality of (star): docs/theory.md, Theorem 2.2, for every finite token
   type T, every finite type X of draft outcomes (k-tuples for any k, or anything
   else) and every draft law D.  Read:
     there are a coupling pi of D and p and a token set S such that
     - pi accepts at least as often as every coupling pi'   (alpha* = max, attained by pi),
     - S minimises p(S') + 1 - D(set(x-bar) \subset S')    (the min of (star), attained at S),
     - P_pi(Y in set(x-bar)) = p(S) + 1 - D(set(x-bar) \subset S)   (max = min).
   Proof: let S minimise (star) and delta = 1 - cut S >= 0.  Gale's theorem on the
   network draft outcomes -> tokens, with one more sink (None) of demand delta that
   every outcome may ship to, ships all of D: Hall's condition for a set A of
   outcomes is D(A) <= D(set \subset U) <= p(U) + delta for U the tokens drafted in A,
   by minimality of S.  What is shipped to the tokens (value >= 1 - delta = cut S) is
   completed to a coupling (Lemma 2.1), whose acceptance is then >= cut S, and
   <= cut S by weak duality. *)
Theorem strong_duality_star :
  exists pi, exists S,
    [/\ is_coupling pi,
        forall pi', is_coupling pi' -> acceptance pi' <= acceptance pi,
        forall S', cut S <= cut S'
      & acceptance pi = cut S].
Proof.
have [S _ Smin] := arg_minP cut (erefl true : xpredT (setT : {set T})).
pose delta := 1 - cut S.
have delta0 : 0 <= delta by rewrite subr_ge0 -cut_setT Smin.
pose N x : {set option T} := None |: [set Some y | y in draft x].
have NSome x y : (Some y \in N x) = (y \in draft x).
  by rewrite in_setU1 /= mem_imset //; move=> ? ? [].
pose b (o : option T) := if o is Some y then p y else delta.
have b0 o : 0 <= b o by case: o.
have hH : hall N D b.
  move=> A; case: (set_0Vmem A) => [->|[x0 x0A]].
    by rewrite big_set0 sumr_ge0.
  pose U := \bigcup_(x in A) draft x.
  have -> : \sum_(o in nbhd N A) b o = delta + pmass U.
    rewrite big_mkcond sum_option /=.
    have -> : None \in nbhd N A.
      by apply/bigcupP; exists x0 => //; rewrite setU11.
    congr (_ + _); rewrite /pmass [RHS]big_mkcond; apply: eq_bigr => y _.
    congr (if _ then _ else _); apply/bigcupP/bigcupP => [[x xA]|[x xA]].
      by rewrite NSome; exists x.
    by exists x => //; rewrite NSome.
  have DA : \sum_(x in A) D x <= Dsub U.
    rewrite /Dsub [X in X <= _]big_mkcond [X in _ <= X]big_mkcond.
    apply: ler_sum => x _; case: ifP => xA; last by case: ifP.
    by rewrite (bigcup_sup _ xA).
  apply: le_trans DA _; have h := Smin U isT.
  have aux (P1 D1 c : R) : c <= P1 + 1 - D1 -> D1 <= 1 - c + P1.
    by rewrite ler_subr_addr -ler_subr_addl [1 - c + P1]addrC addrA.
  exact: (aux _ _ _ h).
have [f [f0 fN frow fcol]] := gale D_ge0 b0 hH.
pose g x y := f x (Some y).
have g0 x y : 0 <= g x y by exact: f0.
have growE x : \sum_y g x y = D x - f x None.
  by rewrite -(frow x) sum_option addrC addKr.
have [pi hpi gpi] : exists2 pi, is_coupling pi & forall x y, g x y <= pi x y.
  apply: completion => // [x|y]; first by rewrite growE ler_subl_addr ler_addl f0.
  exact: (fcol (Some y)).
have acc : cut S <= acceptance pi.
  apply: le_trans (_ : \sum_x \sum_y g x y <= _).
    rewrite (eq_bigr (fun x => D x - f x None)) => [|x _]; last exact: growE.
    rewrite sumrB D_sum1; have h := fcol None; rewrite /= /delta ler_subr_addl in h.
    by rewrite ler_subr_addl addrC.
  apply: ler_sum => x _; rewrite [X in X <= _](bigID (mem (draft x))) /=.
  rewrite [X in _ + X]big1 ?addr0 => [|y yx]; last first.
    by apply: fN; rewrite NSome.
  by apply: ler_sum => y _; apply: gpi.
have accE : acceptance pi = cut S by apply/le_anti; rewrite acc weak_duality.
exists pi, S; split=> // [pi' hpi'|S']; last exact: Smin.
by rewrite accE; apply: weak_duality.
Qed.

(* strong duality of (star) for (p, D): some coupling attains the value of some S
   (with weak duality, the coupling is then optimal and S minimal) *)
Definition strong_duality :=
  exists pi, is_coupling pi /\ exists S, acceptance pi = cut S.

Theorem strong_duality_holds : strong_duality.
Proof.
by have [pi [S [hpi _ _ accE]]] := strong_duality_star; exists pi; split=> //; exists S.
Qed.

(* The K-draft condition, sufficiency: if p(S) >= D(set \subset S) for every S then
   a lossless verifier accepts with probability 1. *)
Theorem kdraft_sufficient :
  (forall S, Dsub S <= pmass S) ->
  exists pi, is_coupling pi /\ acceptance pi = 1.
Proof.
move=> cond; have [pi [hpi [S accE]]] := strong_duality_holds.
exists pi; split=> //.
apply/le_anti; rewrite acceptance_le1 //= accE.
by rewrite /cut addrAC ler_addr subr_ge0.
Qed.

(* docs/theory.md, Theorem 4.1: for every finite token type, every draft law D and
   every k, alpha* = 1 (some coupling of D and p accepts with probability 1) iff
   p(S) >= D(set(x-bar) \subset S) for every token set S. *)
Theorem kdraft_condition :
  (exists pi, is_coupling pi /\ acceptance pi = 1) <->
  (forall S, Dsub S <= pmass S).
Proof.
split; last exact: kdraft_sufficient.
by case=> pi [hpi acc1]; apply: kdraft_necessary acc1.
Qed.

End Duality.

Print Assumptions weak_duality.
Print Assumptions completion.
Print Assumptions strong_duality_star.
Print Assumptions strong_duality_holds.
Print Assumptions kdraft_necessary.
Print Assumptions kdraft_sufficient.
Print Assumptions kdraft_condition.
