with Cognition_Tests;
with Energy_Gate_Tests;
with Input_Guard_Tests;
with Json_Reader_Tests;
with Session_Records_Tests;
with Session_Store_Tests;
with Session_Table_Tests;
with Json_Text_Tests;
with Organs_Texts_Tests;
with Turn_Cycle_Tests;
with Turn_Tool_Tests;
with Soul_Marks_Tests;
with Lifecycle_Tests;
with Model_Cognition_Tests;
with Model_Intender_Tests;
with Word_Search_Tests;
with Turn_Service_Tests;
with Recall_Tests;

package body Body_Suites is

   Suite : aliased AUnit.Test_Suites.Test_Suite;

   Guard_Cases : aliased Input_Guard_Tests.Test;
   Gate_Cases  : aliased Energy_Gate_Tests.Test;
   Json_Cases  : aliased Json_Text_Tests.Test;
   Reader_Cases : aliased Json_Reader_Tests.Test;
   Table_Cases  : aliased Session_Table_Tests.Test;
   Record_Cases : aliased Session_Records_Tests.Test;
   Store_Cases  : aliased Session_Store_Tests.Test;
   Cohere_Cases : aliased Cognition_Tests.Test;
   Texts_Cases  : aliased Organs_Texts_Tests.Test;
   Cycle_Cases  : aliased Turn_Cycle_Tests.Test;
   Tool_Cases   : aliased Turn_Tool_Tests.Test;
   Soul_Cases   : aliased Soul_Marks_Tests.Test;
   Search_Cases : aliased Word_Search_Tests.Test;
   Lifecycle_Cases : aliased Lifecycle_Tests.Test;
   Model_Cases : aliased Model_Cognition_Tests.Test;
   Intender_Cases : aliased Model_Intender_Tests.Test;
   Service_Cases : aliased Turn_Service_Tests.Test;
   Recall_Cases  : aliased Recall_Tests.Test;

   function All_Tests return AUnit.Test_Suites.Access_Test_Suite is
   begin
      Suite.Add_Test (Guard_Cases'Access);
      Suite.Add_Test (Gate_Cases'Access);
      Suite.Add_Test (Json_Cases'Access);
      Suite.Add_Test (Reader_Cases'Access);
      Suite.Add_Test (Table_Cases'Access);
      Suite.Add_Test (Record_Cases'Access);
      Suite.Add_Test (Store_Cases'Access);
      Suite.Add_Test (Cohere_Cases'Access);
      Suite.Add_Test (Texts_Cases'Access);
      Suite.Add_Test (Cycle_Cases'Access);
      Suite.Add_Test (Tool_Cases'Access);
      Suite.Add_Test (Soul_Cases'Access);
      Suite.Add_Test (Search_Cases'Access);
      Suite.Add_Test (Lifecycle_Cases'Access);
      Suite.Add_Test (Model_Cases'Access);
      Suite.Add_Test (Intender_Cases'Access);
      Suite.Add_Test (Service_Cases'Access);
      Suite.Add_Test (Recall_Cases'Access);
      return Suite'Access;
   end All_Tests;

end Body_Suites;
